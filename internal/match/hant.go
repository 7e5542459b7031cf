package match

import "strings"

// Traditional returns p with the simplified Chinese characters of error
// vocabulary written in their traditional forms ("余额不足" becomes
// "餘額不足", "请稍后再试" becomes "請稍後再試"), and p itself when it has
// none of them. Rule phrases are written once, in simplified characters;
// the classifier adds each phrase's traditional form as a phrase of its
// own, so a text from Taiwan or Hong Kong reads like one from the mainland.
//
// The table covers the characters of error wording (accounts, money,
// quotas, limits, servers, networks, requests, models), not the whole
// script; a character it does not know is kept as it is. Where one
// simplified character stands for two traditional ones, the form error
// texts use is chosen (发 is 發 as in 發生, 后 is 後 as in 稍後).
func Traditional(p string) string {
	if !strings.ContainsFunc(p, func(r rune) bool { _, ok := hant[r]; return ok }) {
		return p
	}
	return strings.Map(func(r rune) rune {
		if t, ok := hant[r]; ok {
			return t
		}
		return r
	}, p)
}

// Simplified returns the simplified form of a traditional character of the
// same table, and r itself for any other rune.
func Simplified(r rune) rune {
	if s, ok := hans[r]; ok {
		return s
	}
	return r
}

// hans maps a traditional character of hant back to its simplified form.
// It is read only.
var hans = func() map[rune]rune {
	m := make(map[rune]rune, len(hant))
	for s, t := range hant {
		m[t] = s
	}
	return m
}()

// hant maps a simplified character to its traditional form. It is read
// only.
var hant = func() map[rune]rune {
	const pairs = "" +
		"个個为為书書于於仅僅会會余餘关關内內冻凍务務动動区區单單参參发發号號后後启啟员員" +
		"响響围圍国國图圖场場处處复復实實审審对對尽盡并並广廣应應开開异異强強当當录錄态態" +
		"户戶护護拦攔数數断斷无無时時显顯暂暫机機权權极極栏欄检檢残殘没沒测測满滿点點状狀" +
		"现現码碼确確积積称稱级級线線组組结結络絡绝絕统統维維网網联聯范範规規触觸订訂认認" +
		"设設访訪证證词詞试試话話该該误誤请請调調负負责責败敗账帳费費资資载載较較输輸达達" +
		"过過进進远遠违違连連鉴鑑钥鑰锁鎖错錯长長闭閉问問阅閱险險预預频頻额額风風饱飽验驗" +
		"条條读讀写寫换換择擇须須获獲页頁类類见見视視项項题題传傳储儲补補库庫际際压壓协協" +
		"变變据據帮幫众眾选選节節约約购購买買卖賣价價钱錢币幣续續创創删刪缓緩备備装裝础礎" +
		"标標签簽绑綁鸟鳥乐樂们們这這么麼还還从從"
	rs := []rune(pairs)
	m := make(map[rune]rune, len(rs)/2)
	for i := 0; i+1 < len(rs); i += 2 {
		m[rs[i]] = rs[i+1]
	}
	return m
}()
