// Command modzip serves one module of a working tree from a file-based Go
// module proxy, as GOPROXY=file://DIR reads it (https://go.dev/ref/mod#goproxy-protocol).
//
//	go run .ci/modzip/main.go -dir adapters/openai -version v0.1.0 -proxy /tmp/proxy [-files list.txt]
//
// It reads the module path from DIR/go.mod and writes, under
// PROXY/<escaped module path>/@v/:
//
//   - list: the version, added to those already listed;
//   - VERSION.info: {"Version": ..., "Time": ...};
//   - VERSION.mod: DIR/go.mod as it is;
//   - VERSION.zip: the module's files, each named module@version/path.
//
// The zip follows the module zip format (https://go.dev/ref/mod#zip-files):
// it leaves out directories holding another go.mod (nested modules), version
// control directories (.git, .hg, .svn, .bzr), vendor directories, symbolic
// links and other files that are not regular, and files whose path the
// format forbids (see pathOK). Two paths equal but for case are an error, as
// are a module over 500 MiB and a go.mod or LICENSE over 16 MiB. With
// -files, only the files named in that list (one path a line, relative to
// the directory modzip runs in, as `git ls-files` prints them) are taken:
// the working tree without what git ignores.
//
// Module paths and versions are case-escaped: an upper-case letter becomes
// '!' and the letter in lower case.
//
// It uses the standard library only.
package main

import (
	"archive/zip"
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Limits of the module zip format.
const (
	maxZipFile  = 500 << 20
	maxGoMod    = 16 << 20
	maxLicense  = 16 << 20
	maxZipFiles = 1 << 20
)

func main() {
	dir := flag.String("dir", ".", "module root directory (holds go.mod)")
	version := flag.String("version", "", "version to serve, e.g. v0.1.0")
	proxy := flag.String("proxy", "", "proxy directory to write into")
	files := flag.String("files", "", "optional file list (paths relative to the working directory) to take files from")
	flag.Parse()
	if err := run(*dir, *version, *proxy, *files); err != nil {
		fmt.Fprintln(os.Stderr, "modzip:", err)
		os.Exit(1)
	}
}

func run(dir, version, proxy, listFile string) error {
	if !semverOK(version) {
		return fmt.Errorf("version %q is not a canonical vMAJOR.MINOR.PATCH version", version)
	}
	if proxy == "" {
		return errors.New("-proxy is required")
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return err
	}
	if len(gomod) > maxGoMod {
		return fmt.Errorf("%s/go.mod is over 16 MiB", dir)
	}
	modPath := modulePath(gomod)
	if modPath == "" {
		return fmt.Errorf("%s/go.mod has no module line", dir)
	}
	escPath, err := escape(modPath)
	if err != nil {
		return err
	}
	escVer, err := escape(version)
	if err != nil {
		return err
	}
	var allow map[string]bool
	if listFile != "" {
		if allow, err = readList(listFile); err != nil {
			return err
		}
	}

	files, err := collect(dir, allow)
	if err != nil {
		return err
	}
	vdir := filepath.Join(proxy, filepath.FromSlash(escPath), "@v")
	if err := os.MkdirAll(vdir, 0o755); err != nil {
		return err
	}
	prefix := modPath + "@" + version + "/"
	if err := writeZip(filepath.Join(vdir, escVer+".zip"), prefix, dir, files); err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, escVer+".mod"), gomod, 0o644); err != nil {
		return err
	}
	info, err := json.Marshal(struct {
		Version string
		Time    string
	}{version, time.Now().UTC().Format(time.RFC3339)})
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(vdir, escVer+".info"), info, 0o644); err != nil {
		return err
	}
	if err := addToList(filepath.Join(vdir, "list"), version); err != nil {
		return err
	}
	fmt.Printf("%s@%s: %d files\n", modPath, version, len(files))
	return nil
}

// collect returns the paths (slash-separated, relative to root, sorted) of
// the files that belong in the module zip of the module at root.
func collect(root string, allow map[string]bool) ([]string, error) {
	var files []string
	folded := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if rel == "." {
				return nil
			}
			switch d.Name() {
			case ".git", ".hg", ".svn", ".bzr", "vendor":
				return filepath.SkipDir
			}
			if _, err := os.Lstat(filepath.Join(p, "go.mod")); err == nil {
				return filepath.SkipDir // a nested module
			}
			return nil
		}
		if !d.Type().IsRegular() {
			return nil
		}
		if allow != nil && !allow[filepath.ToSlash(filepath.Clean(p))] {
			return nil
		}
		if !pathOK(rel) {
			fmt.Fprintf(os.Stderr, "modzip: leaving out %s: the module zip format forbids this path\n", p)
			return nil
		}
		key := strings.ToLower(rel)
		if other, dup := folded[key]; dup {
			return fmt.Errorf("%s and %s differ only in case", other, rel)
		}
		folded[key] = rel
		files = append(files, rel)
		return nil
	})
	if err != nil {
		return nil, err
	}
	if len(files) > maxZipFiles {
		return nil, fmt.Errorf("%d files: too many for a module zip", len(files))
	}
	slices.Sort(files)
	return files, nil
}

// writeZip writes the files of root into a zip at name, each entry named
// prefix+path.
func writeZip(name, prefix, root string, files []string) (err error) {
	out, err := os.Create(name)
	if err != nil {
		return err
	}
	defer func() {
		if cerr := out.Close(); err == nil {
			err = cerr
		}
	}()
	zw := zip.NewWriter(out)
	var total int64
	for _, rel := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		st, err := os.Stat(p)
		if err != nil {
			return err
		}
		if rel == "LICENSE" && st.Size() > maxLicense {
			return fmt.Errorf("%s is over 16 MiB", p)
		}
		total += st.Size()
		if total > maxZipFile {
			return fmt.Errorf("module %s is over 500 MiB unpacked", root)
		}
		w, err := zw.CreateHeader(&zip.FileHeader{Name: prefix + rel, Method: zip.Deflate, Modified: st.ModTime()})
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		_, err = io.Copy(w, f)
		f.Close()
		if err != nil {
			return err
		}
	}
	return zw.Close()
}

// pathOK reports whether a file path may appear in a module zip: non-empty
// elements that are not "." or "..", of letters, digits and the punctuation
// the format allows, no element ending in a dot, and no element that is a
// Windows reserved device name (https://go.dev/ref/mod#zip-path-size-constraints).
func pathOK(p string) bool {
	if p == "" || !utf8.ValidString(p) || strings.HasPrefix(p, "/") {
		return false
	}
	for _, elem := range strings.Split(p, "/") {
		if elem == "" || elem == "." || elem == ".." || strings.HasSuffix(elem, ".") {
			return false
		}
		for _, r := range elem {
			if !fileRuneOK(r) {
				return false
			}
		}
		short := elem
		if i := strings.IndexByte(short, '.'); i >= 0 {
			short = short[:i]
		}
		if reserved(short) {
			return false
		}
		// A Windows short name such as "EXAMPLE~1" is refused as well.
		if i := strings.LastIndexByte(short, '~'); i >= 0 && i < len(short)-1 && allDigits(short[i+1:]) {
			return false
		}
	}
	return true
}

func fileRuneOK(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9' ||
			strings.ContainsRune("!#$%&()+,-.=@[]^_{}~ ", r)
	}
	return unicode.IsLetter(r)
}

func reserved(s string) bool {
	switch strings.ToUpper(s) {
	case "CON", "PRN", "AUX", "NUL",
		"COM1", "COM2", "COM3", "COM4", "COM5", "COM6", "COM7", "COM8", "COM9",
		"LPT1", "LPT2", "LPT3", "LPT4", "LPT5", "LPT6", "LPT7", "LPT8", "LPT9":
		return true
	}
	return false
}

func allDigits(s string) bool {
	for _, r := range s {
		if r < '0' || r > '9' {
			return false
		}
	}
	return s != ""
}

// escape case-escapes a module path or version for the proxy's URL space:
// each upper-case letter becomes '!' followed by the letter in lower case.
// A '!' in the input is an error.
func escape(s string) (string, error) {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r == '!' || r >= utf8.RuneSelf:
			return "", fmt.Errorf("cannot escape %q: it holds %q", s, r)
		case 'A' <= r && r <= 'Z':
			b.WriteByte('!')
			b.WriteRune(unicode.ToLower(r))
		default:
			b.WriteRune(r)
		}
	}
	return b.String(), nil
}

// modulePath returns the path of the module line of a go.mod file.
func modulePath(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		line = strings.TrimSpace(line)
		if i := strings.Index(line, "//"); i >= 0 {
			line = strings.TrimSpace(line[:i])
		}
		rest, ok := strings.CutPrefix(line, "module")
		if !ok || rest == "" || rest[0] != ' ' && rest[0] != '\t' {
			continue
		}
		return strings.Trim(strings.TrimSpace(rest), `"`)
	}
	return ""
}

// semverOK reports whether v is vMAJOR.MINOR.PATCH with an optional
// pre-release, no build metadata.
func semverOK(v string) bool {
	rest, ok := strings.CutPrefix(v, "v")
	if !ok {
		return false
	}
	core, pre, hasPre := strings.Cut(rest, "-")
	if hasPre && pre == "" || strings.Contains(v, "+") {
		return false
	}
	parts := strings.Split(core, ".")
	if len(parts) != 3 {
		return false
	}
	for _, n := range parts {
		if !allDigits(n) || len(n) > 1 && n[0] == '0' {
			return false
		}
	}
	return true
}

func readList(name string) (map[string]bool, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	allow := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if line := strings.TrimSpace(sc.Text()); line != "" {
			allow[path.Clean(line)] = true
		}
	}
	return allow, sc.Err()
}

func addToList(name, version string) error {
	old, err := os.ReadFile(name)
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	for _, v := range strings.Fields(string(old)) {
		if v == version {
			return nil
		}
	}
	return os.WriteFile(name, append(old, version+"\n"...), 0o644)
}
