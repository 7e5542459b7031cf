package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"
)

// This file reads the session files of the reference agent (Pi): one JSON
// object per line, a "session" header first, then entries. The format is
// described in the project's reference notes (pi-session-format.md); only the
// fields a replay needs are decoded, and every later, additive field or
// entry type is ignored.

// Limits on what a replay reads. Real lines reach a few MiB (tool output,
// images as base64) and real files tens of MiB; anything beyond these bounds
// is an error or a skipped line, never an out-of-memory crash or a read that
// does not end.
const (
	// maxSessionLine bounds one entry line. A longer line is skipped with a
	// warning (it cannot be the header).
	maxSessionLine = 64 << 20
	// maxHeaderBytes bounds what is read before the header is complete:
	// blank lines and the header line itself. A real header is well under
	// 1 KiB, so a stream with no newline (/dev/zero, a binary file) is
	// rejected after 1 MiB.
	maxHeaderBytes = 1 << 20
	// maxSessionBytes bounds the whole input.
	maxSessionBytes = 1 << 30
	// maxKeptText bounds the text kept from one entry (an error message, a
	// compaction summary) once the line has been parsed.
	maxKeptText = 64 << 10
	// maxExcerptText bounds the text kept for an excerpt (a user message).
	maxExcerptText = 1 << 10
	// maxWarnings is the number of warnings kept; later ones are counted.
	maxWarnings = 20
)

// session is a parsed session file.
type session struct {
	// version is the header's format version: 1 (no version field), 2 or 3.
	version int
	// id, cwd and created come from the header.
	id, cwd string
	created time.Time
	// provider and model are the early v1 header's "provider" and "modelId".
	provider, model string
	// entries are the non-header entries in file order.
	entries []*sessionEntry
	// warnings are oddities that do not stop the replay, such as two JSON
	// objects on one line or a corrupt line; at most maxWarnings are kept
	// and moreWarnings counts the rest.
	warnings     []string
	moreWarnings int
	// lines is the number of lines read; skipped the number of corrupt lines
	// (not JSON, not an object, an entry of the wrong shape, or too long)
	// left out.
	lines, skipped int
}

// warn records a warning.
func (s *session) warn(format string, args ...any) {
	if len(s.warnings) >= maxWarnings {
		s.moreWarnings++
		return
	}
	s.warnings = append(s.warnings, fmt.Sprintf(format, args...))
}

// sessionEntry is one parsed entry, with only what a replay reads.
type sessionEntry struct {
	line  int // 1-based line number in the file
	index int // position in the parsed array, header = 0 (v1 firstKeptEntryIndex)

	typ      string
	id       string
	hasID    bool
	parentID string // "" for a root (null or absent)
	time     time.Time

	// message entries
	role         string
	checkpoint   bool
	text         string // user text (excerpt source), or the summary of a compaction/branch_summary
	provider     string // assistant provider; model_change provider
	model        string // assistant model; model_change modelId
	stopReason   string
	errorMessage string
	requestTime  time.Time // assistant message.timestamp (ms): when the request started
	status       int       // providerError.status or diagnostics[].details.status (late files)
	code         string    // providerError.code/type or diagnostics[].details.errorCode
	usageIn      int
	usageOut     int
	usageCache   int
	usageWrite   int // cacheWrite: prompt tokens written to the cache
	hasText      bool
	hasToolCalls bool
	hasThinking  bool
	toolName     string // toolResult

	// compaction entries
	firstKeptID    string
	hasFirstKeptID bool
	firstKeptIndex int // v1; -1 when absent
	tokensBefore   int
	fromHook       bool

	noMessage bool // a message entry without a "message" object
}

// rawHeader is the header line.
type rawHeader struct {
	Type      string          `json:"type"`
	Version   json.RawMessage `json:"version"`
	ID        json.RawMessage `json:"id"`
	Timestamp string          `json:"timestamp"`
	Cwd       string          `json:"cwd"`
	Provider  string          `json:"provider"`
	ModelID   string          `json:"modelId"`
}

// rawEntry is a non-header line. Fields whose type varies between writers
// are decoded leniently from json.RawMessage.
type rawEntry struct {
	Type                string          `json:"type"`
	ID                  json.RawMessage `json:"id"`
	ParentID            json.RawMessage `json:"parentId"`
	Timestamp           json.RawMessage `json:"timestamp"`
	Checkpoint          json.RawMessage `json:"checkpoint"`
	Message             *rawMessage     `json:"message"`
	Provider            json.RawMessage `json:"provider"`
	ModelID             json.RawMessage `json:"modelId"`
	Summary             json.RawMessage `json:"summary"`
	FirstKeptEntryID    json.RawMessage `json:"firstKeptEntryId"`
	FirstKeptEntryIndex json.RawMessage `json:"firstKeptEntryIndex"`
	TokensBefore        json.RawMessage `json:"tokensBefore"`
	FromHook            json.RawMessage `json:"fromHook"`
}

// rawMessage is the "message" of a message entry.
type rawMessage struct {
	Role          json.RawMessage `json:"role"`
	Content       json.RawMessage `json:"content"`
	Provider      json.RawMessage `json:"provider"`
	Model         json.RawMessage `json:"model"`
	Usage         json.RawMessage `json:"usage"`
	StopReason    json.RawMessage `json:"stopReason"`
	ErrorMessage  json.RawMessage `json:"errorMessage"`
	Timestamp     json.RawMessage `json:"timestamp"`
	ToolName      json.RawMessage `json:"toolName"`
	ProviderError json.RawMessage `json:"providerError"`
	Diagnostics   json.RawMessage `json:"diagnostics"`
}

// rawBlock is one content block.
type rawBlock struct {
	Type     string          `json:"type"`
	Text     json.RawMessage `json:"text"`
	Thinking json.RawMessage `json:"thinking"`
	Redacted bool            `json:"redacted"`
}

// eventStreamTypes are the event types of `pi --mode json` output, which
// starts with a session header too but is not a session file.
var eventStreamTypes = map[string]bool{
	"agent_start": true, "agent_end": true, "turn_start": true, "turn_end": true,
	"message_start": true, "message_update": true, "message_end": true,
	"tool_execution_start": true, "tool_execution_update": true, "tool_execution_end": true,
	"auto_retry_start": true, "auto_retry_end": true,
	"auto_compaction_start": true, "auto_compaction_end": true,
}

// errLineTooLong is returned by readLine for a line over its limit.
var errLineTooLong = errors.New("line too long")

// capReader reads from r until n bytes were read, then fails with an
// error that states the limit.
type capReader struct {
	r     io.Reader
	n     int64
	limit int64
}

func (c *capReader) Read(p []byte) (int, error) {
	if c.n <= 0 {
		return 0, fmt.Errorf("input larger than %d MiB", c.limit>>20)
	}
	if int64(len(p)) > c.n {
		p = p[:c.n]
	}
	n, err := c.r.Read(p)
	c.n -= int64(n)
	return n, err
}

// readLine reads one line of at most limit bytes, without its line ending.
// It returns io.EOF only when nothing is left. A longer line gives
// errLineTooLong with the rest of the line still unread (see skipLine).
func readLine(r *bufio.Reader, buf []byte, limit int) ([]byte, error) {
	buf = buf[:0]
	for {
		chunk, err := r.ReadSlice('\n')
		if len(buf)+len(chunk) > limit {
			return nil, errLineTooLong
		}
		buf = append(buf, chunk...)
		switch {
		case err == nil:
			return bytes.TrimSuffix(bytes.TrimSuffix(buf, []byte("\n")), []byte("\r")), nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case errors.Is(err, io.EOF) && len(buf) > 0:
			return bytes.TrimSuffix(buf, []byte("\r")), nil
		default:
			return nil, err
		}
	}
}

// skipLine discards the rest of a line after errLineTooLong. It returns
// nil at the end of the line or of the input, or the read error (such as
// the one of capReader).
func skipLine(r *bufio.Reader) error {
	for {
		_, err := r.ReadSlice('\n')
		switch {
		case err == nil, errors.Is(err, io.EOF):
			return nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return err
		}
	}
}

// openSession opens the session file at path, or standard input for "-".
// Directories and devices are refused at once (a device such as /dev/zero
// never ends); a FIFO is read like standard input, within the limits above.
func openSession(path string, stdin io.Reader) (io.Reader, func() error, error) {
	if path == "-" {
		return stdin, func() error { return nil }, nil
	}
	f, err := os.Open(path)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil, nil, fmt.Errorf("open %s: no such file", path)
		}
		return nil, nil, err
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, err
	}
	switch m := fi.Mode(); {
	case m.IsDir():
		f.Close()
		return nil, nil, fmt.Errorf("%s: is a directory, not a session file", path)
	case m&os.ModeDevice != 0:
		f.Close()
		return nil, nil, fmt.Errorf("%s: is a device, not a session file", path)
	}
	return f, f.Close, nil
}

// loadSession opens and parses the session file at path ("-": stdin).
func loadSession(path string, stdin io.Reader) (*session, error) {
	r, closeFn, err := openSession(path, stdin)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	name := path
	if path == "-" {
		name = "<stdin>"
	}
	return parseSession(name, r)
}

// parseSession parses a session file read from r; name is used in errors
// and warnings ("NAME:LINE: ..."). It never panics. The header must be the
// first line; after it, a corrupt line (not JSON, not an object, an entry
// whose fields have the wrong JSON types, or longer than maxSessionLine) is
// skipped with a warning and counted, as Pi's loader skips lines it cannot
// parse. An event of the `pi --mode json` stream, a read error and input
// beyond maxSessionBytes are errors. Only the fields a replay needs are kept
// from each line, not the line itself.
func parseSession(name string, r io.Reader) (*session, error) {
	return parseSessionMax(name, r, maxSessionBytes)
}

// parseSessionMax is parseSession with a bound of max bytes on the whole
// input.
func parseSessionMax(name string, r io.Reader, max int64) (*session, error) {
	br := bufio.NewReaderSize(&capReader{r: r, n: max, limit: max}, 64<<10)
	s := &session{}
	var buf []byte
	lineNo, parsed, headerBytes := 0, 0, 0
	for {
		limit := maxSessionLine
		if parsed == 0 {
			limit = maxHeaderBytes - headerBytes
		}
		line, err := readLine(br, buf, limit)
		if errors.Is(err, io.EOF) {
			break
		}
		lineNo++
		s.lines = lineNo
		if errors.Is(err, errLineTooLong) {
			if parsed == 0 {
				return nil, fmt.Errorf("%s:%d: not a Pi session file: no session header line in the first %d KiB", name, lineNo, maxHeaderBytes>>10)
			}
			if err := skipLine(br); err != nil {
				return nil, fmt.Errorf("%s: reading line %d: %w", name, lineNo, err)
			}
			s.skipped++
			s.warn("%s:%d: line longer than %d MiB; skipped", name, lineNo, maxSessionLine>>20)
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%s: reading line %d: %w", name, lineNo, err)
		}
		buf = line[:0]
		if parsed == 0 {
			headerBytes += len(line) + 1
		}
		if len(bytes.TrimSpace(line)) == 0 {
			continue
		}
		objs, err := splitObjects(line)
		if err != nil {
			if parsed == 0 {
				return nil, fmt.Errorf("%s:%d: %v", name, lineNo, err)
			}
			s.skipped++
			s.warn("%s:%d: %v; line skipped", name, lineNo, err)
			continue
		}
		if len(objs) > 1 {
			s.warn("%s:%d: %d JSON objects on one line; read as separate entries (Pi skips such a line)", name, lineNo, len(objs))
		}
		for _, obj := range objs {
			if parsed == 0 {
				if err := s.parseHeader(obj); err != nil {
					return nil, fmt.Errorf("%s:%d: %v", name, lineNo, err)
				}
				parsed++
				continue
			}
			e, err := parseEntry(obj)
			if err != nil {
				s.skipped++
				s.warn("%s:%d: %v; entry skipped", name, lineNo, err)
				continue
			}
			if eventStreamTypes[e.typ] {
				return nil, fmt.Errorf("%s:%d: %q is an event of the `pi --mode json` stream: this is an event stream, not a session file", name, lineNo, e.typ)
			}
			if e.noMessage {
				s.warn("%s:%d: message entry without a \"message\" object", name, lineNo)
			}
			e.line, e.index = lineNo, parsed
			parsed++
			s.entries = append(s.entries, e)
		}
	}
	if parsed == 0 {
		return nil, fmt.Errorf("%s: empty file: not a Pi session file (want a \"session\" header line)", name)
	}
	return s, nil
}

// splitObjects splits one line into its JSON values. A real file can hold
// two objects on one line (a crash between writes); each must be an object.
func splitObjects(line []byte) ([]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(line))
	var out []json.RawMessage
	for {
		var v json.RawMessage
		err := dec.Decode(&v)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			msg := strings.TrimPrefix(err.Error(), "json: ")
			var se *json.SyntaxError
			if errors.As(err, &se) {
				msg += fmt.Sprintf(" (at byte %d)", se.Offset)
			}
			if errors.Is(err, io.ErrUnexpectedEOF) {
				msg = "unexpected end of line (truncated entry?)"
			}
			return nil, fmt.Errorf("invalid JSON: %s", msg)
		}
		if len(v) == 0 || v[0] != '{' {
			return nil, fmt.Errorf("invalid JSON: want an object, got %s", excerpt(string(v), 40))
		}
		out = append(out, v)
	}
}

// parseHeader reads the first object of the file, which must be the session
// header with a string id and a known version.
func (s *session) parseHeader(obj []byte) error {
	var h rawHeader
	if err := json.Unmarshal(obj, &h); err != nil || h.Type != "session" {
		typ := h.Type
		if err != nil {
			var probe struct {
				Type any `json:"type"`
			}
			_ = json.Unmarshal(obj, &probe)
			typ = fmt.Sprint(probe.Type)
		}
		if typ == "" || typ == "<nil>" {
			return errors.New("not a Pi session file: the first line is not a session header (no \"type\")")
		}
		return fmt.Errorf("not a Pi session file: the first line is a %q entry, not a \"session\" header", typ)
	}
	id, ok := str(h.ID)
	if !ok {
		return errors.New("not a Pi session file: the session header has no string \"id\"")
	}
	s.id, s.cwd, s.provider, s.model = id, h.Cwd, h.Provider, h.ModelID
	s.created = parseISO(h.Timestamp)
	s.version = 1
	if len(h.Version) > 0 {
		v, err := strconv.Atoi(string(h.Version))
		if err != nil || v < 1 || v > 3 {
			return fmt.Errorf("unknown session format version %s (this replay reads versions 1, 2 and 3)", excerpt(string(h.Version), 20))
		}
		s.version = v
	}
	return nil
}

// parseEntry reads one non-header object. Type mismatches in the fields a
// replay reads are errors; everything else is ignored.
func parseEntry(obj []byte) (*sessionEntry, error) {
	var r rawEntry
	if err := json.Unmarshal(obj, &r); err != nil {
		return nil, entryError(err)
	}
	e := &sessionEntry{typ: r.Type, firstKeptIndex: -1}
	var ok bool
	if e.id, ok = str(r.ID); ok {
		e.hasID = true
	}
	e.parentID, _ = str(r.ParentID)
	if ts, ok := str(r.Timestamp); ok {
		e.time = parseISO(ts)
	}
	e.checkpoint = isTrue(r.Checkpoint)
	switch r.Type {
	case "model_change":
		e.provider, _ = str(r.Provider)
		e.model, _ = str(r.ModelID)
	case "compaction", "branch_summary":
		e.text, _ = str(r.Summary)
		e.text = clip(e.text, maxKeptText)
		e.firstKeptID, e.hasFirstKeptID = str(r.FirstKeptEntryID)
		if n, ok := num(r.FirstKeptEntryIndex); ok {
			e.firstKeptIndex = n
		}
		e.tokensBefore, _ = num(r.TokensBefore)
		e.fromHook = isTrue(r.FromHook)
	case "message":
		if r.Message == nil {
			e.noMessage = true // reported as a warning; replayed as an entry the advisor does not read
			break
		}
		parseMessage(e, r.Message)
	}
	return e, nil
}

// parseMessage fills e from an AgentMessage.
func parseMessage(e *sessionEntry, m *rawMessage) {
	e.role, _ = str(m.Role)
	e.provider, _ = str(m.Provider)
	e.model, _ = str(m.Model)
	e.stopReason, _ = str(m.StopReason)
	e.errorMessage, _ = str(m.ErrorMessage)
	e.errorMessage = clip(e.errorMessage, maxKeptText)
	e.toolName, _ = str(m.ToolName)
	if ms, ok := num(m.Timestamp); ok && ms > 0 {
		e.requestTime = time.UnixMilli(int64(ms)).UTC()
	}
	var u struct {
		Input, Output, CacheRead, CacheWrite json.RawMessage
	}
	if json.Unmarshal(m.Usage, &u) == nil {
		e.usageIn, _ = num(u.Input)
		e.usageOut, _ = num(u.Output)
		e.usageCache, _ = num(u.CacheRead)
		e.usageWrite, _ = num(u.CacheWrite)
	}
	// Content: a string (user, custom) or an array of blocks.
	if text, ok := str(m.Content); ok {
		e.text = clip(text, maxExcerptText)
		e.hasText = strings.TrimSpace(text) != ""
	} else {
		var blocks []json.RawMessage
		if json.Unmarshal(m.Content, &blocks) == nil {
			for _, raw := range blocks {
				var b rawBlock
				if json.Unmarshal(raw, &b) != nil {
					continue
				}
				switch b.Type {
				case "text":
					t, _ := str(b.Text)
					if strings.TrimSpace(t) != "" {
						e.hasText = true
						if e.text == "" {
							e.text = clip(t, maxExcerptText)
						}
					}
				case "toolCall":
					e.hasToolCalls = true
				case "thinking":
					t, _ := str(b.Thinking)
					if strings.TrimSpace(t) != "" || b.Redacted {
						e.hasThinking = true
					}
				}
			}
		}
	}
	// The structured status of a failure, in late files.
	var pe struct {
		Status json.RawMessage `json:"status"`
		Code   json.RawMessage `json:"code"`
		Type   json.RawMessage `json:"type"`
	}
	if json.Unmarshal(m.ProviderError, &pe) == nil {
		e.status, _ = num(pe.Status)
		if c, ok := str(pe.Code); ok {
			e.code = c
		} else if t, ok := str(pe.Type); ok {
			e.code = t
		}
	}
	var diags []struct {
		Details struct {
			Status    json.RawMessage `json:"status"`
			ErrorCode json.RawMessage `json:"errorCode"`
		} `json:"details"`
	}
	if json.Unmarshal(m.Diagnostics, &diags) == nil {
		for _, d := range diags {
			if e.status == 0 {
				e.status, _ = num(d.Details.Status)
			}
			if e.code == "" {
				e.code, _ = str(d.Details.ErrorCode)
			}
		}
	}
	if e.status != 0 && (e.status < 100 || e.status > 599) {
		e.status = 0
	}
}

// entryError describes a json.Unmarshal error of an entry.
func entryError(err error) error {
	var te *json.UnmarshalTypeError
	if errors.As(err, &te) && te.Field != "" {
		return fmt.Errorf("field %q: unexpected JSON %s", te.Field, te.Value)
	}
	return fmt.Errorf("invalid entry: %s", strings.TrimPrefix(err.Error(), "json: "))
}

// clip cuts s to at most n bytes, at a rune boundary.
func clip(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// str returns a JSON string's value; ok is false for anything else
// (absent, null, a number).
func str(raw json.RawMessage) (string, bool) {
	if len(raw) == 0 || raw[0] != '"' {
		return "", false
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return "", false
	}
	return s, true
}

// num returns a JSON number as an int, truncated; ok is false for anything
// else or a value out of range.
func num(raw json.RawMessage) (int, bool) {
	if len(raw) == 0 {
		return 0, false
	}
	var f float64
	if json.Unmarshal(raw, &f) != nil || f != f || f > 1<<53 || f < -(1<<53) {
		return 0, false
	}
	return int(f), true
}

// isTrue reports whether raw is the JSON literal true.
func isTrue(raw json.RawMessage) bool { return string(raw) == "true" }

// parseISO parses an ISO-8601 timestamp; the zero time when it is not one.
func parseISO(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}
	}
	return t.UTC()
}

// mainLine returns the entries a replay follows, oldest first, and a note on
// how they were chosen.
//
// Version 1 files are a single chain: file order is the conversation. In
// version 2 and 3 files, entries form a tree by id and parentId, and
// branching (editing an earlier message, /tree) appends a sibling without
// marking the old branch, so file order would interleave abandoned
// branches with the live one and feed the Session turns that never
// followed each other. Like Pi's loader, the replay takes the last entry
// in file order as the leaf and walks parentId up to a root (stopping at a
// missing parent or a cycle); that path is the main line. A file whose
// entries carry no ids at all (a v1 file with a newer header) is read in
// file order.
func (s *session) mainLine() ([]*sessionEntry, string) {
	if s.version == 1 {
		return s.entries, "file order (version 1 files are a single chain)"
	}
	byID := make(map[string]*sessionEntry, len(s.entries))
	var leaf *sessionEntry
	for _, e := range s.entries {
		if e.hasID {
			byID[e.id] = e // a later duplicate wins, as in Pi's loader
			leaf = e
		}
	}
	if leaf == nil {
		return s.entries, "file order (no entry has an id)"
	}
	var path []*sessionEntry
	seen := map[*sessionEntry]bool{}
	for e := leaf; e != nil && !seen[e]; {
		seen[e] = true
		path = append(path, e)
		if e.parentID == "" {
			break
		}
		e = byID[e.parentID]
	}
	for i, j := 0, len(path)-1; i < j; i, j = i+1, j-1 {
		path[i], path[j] = path[j], path[i]
	}
	how := fmt.Sprintf("main line from the last entry (line %d) up through parentId", leaf.line)
	if off := len(s.entries) - len(path); off > 0 {
		how += fmt.Sprintf("; %d entr%s on other branches skipped", off, plural(off, "y", "ies"))
	}
	return path, how
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}
