package model

import (
	"fmt"
	"regexp"
	"strings"
	"unicode"
)

// FieldError is a setting that cannot be used, reported by the library in
// its own words: Field is the setting's name in its settings struct (Rule,
// MinItems), and Msg the message, in which {Name} stands for the name of a
// setting (Field or another) as the caller shows it. Error shows the
// library's names (FieldName: rule, min-items); a command shows its flags
// or config keys instead (Render), so that the library never names a flag.
// Test for it with errors.As.
type FieldError struct {
	Field string
	Msg   string
}

// FieldErrorf is a FieldError on field with the message format (which may
// hold {Name} placeholders) and args.
func FieldErrorf(field, format string, args ...any) *FieldError {
	return &FieldError{Field: field, Msg: fmt.Sprintf(format, args...)}
}

var placeholder = regexp.MustCompile(`\{[A-Z][A-Za-z0-9]*\}`)

// Render is the message with every {Name} replaced by name(Name).
func (e *FieldError) Render(name func(field string) string) string {
	return placeholder.ReplaceAllStringFunc(e.Msg, func(p string) string { return name(p[1 : len(p)-1]) })
}

func (e *FieldError) Error() string { return e.Render(FieldName) }

// FieldName is a settings field's name in lower kebab case: MinItems is
// min-items, TargetSE target-se, MaxIter max-iter.
func FieldName(field string) string {
	var b strings.Builder
	rs := []rune(field)
	for i, r := range rs {
		if unicode.IsUpper(r) {
			// A word starts at an upper-case letter after a lower-case one,
			// or before a lower-case one inside an acronym (SEValue: se-value).
			if i > 0 && (unicode.IsLower(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1]) && unicode.IsUpper(rs[i-1])) {
				b.WriteByte('-')
			}
			b.WriteRune(unicode.ToLower(r))
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
