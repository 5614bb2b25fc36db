package engine

import (
	"fmt"
	"html"
	"strings"
)

// template is the small part of Handlebars that democratic-csi configs use
// in datasetProperties and nameTemplate: `{{ path }}` (HTML-escaped, as
// Handlebars does), `{{{ path }}}` (raw), and paths like `name`,
// `parameters.foo` or `parameters.[csi.storage.k8s.io/pvc/name]`. Anything
// else (helpers, blocks) is refused when the config is read, so a template
// never renders differently from democratic-csi without saying so.
type template struct {
	parts []tmplPart
}

type tmplPart struct {
	text string
	path []string // nil for text
	raw  bool
}

func parseTemplate(s string) (template, error) {
	var t template
	for s != "" {
		i := strings.Index(s, "{{")
		if i < 0 {
			t.parts = append(t.parts, tmplPart{text: s})
			break
		}
		if i > 0 {
			t.parts = append(t.parts, tmplPart{text: s[:i]})
		}
		s = s[i:]
		raw := strings.HasPrefix(s, "{{{")
		open, closing := "{{", "}}"
		if raw {
			open, closing = "{{{", "}}}"
		}
		j := strings.Index(s, closing)
		if j < 0 {
			return t, fmt.Errorf("unclosed %q in template", open)
		}
		expr := strings.TrimSpace(s[len(open):j])
		s = s[j+len(closing):]
		path, err := parsePath(expr)
		if err != nil {
			return t, err
		}
		t.parts = append(t.parts, tmplPart{path: path, raw: raw})
	}
	return t, nil
}

func parsePath(expr string) ([]string, error) {
	if expr == "" || strings.ContainsAny(expr[:1], "#/^!>&") || strings.ContainsAny(expr, " \t") {
		return nil, fmt.Errorf("template expression {{%s}} is not supported: only paths such as {{ name }}, {{ parameters.foo }} or {{ parameters.[csi.storage.k8s.io/pvc/name] }}", expr)
	}
	var path []string
	for expr != "" {
		if expr[0] == '[' {
			k := strings.IndexByte(expr, ']')
			if k < 0 {
				return nil, fmt.Errorf("template path %q: unclosed [", expr)
			}
			path = append(path, expr[1:k])
			expr = strings.TrimPrefix(expr[k+1:], ".")
			continue
		}
		k := strings.IndexByte(expr, '.')
		if k < 0 {
			path = append(path, expr)
			break
		}
		path = append(path, expr[:k])
		expr = expr[k+1:]
	}
	return path, nil
}

// render fills the template from name and parameters; a missing value
// renders as "" (as in Handlebars).
func (t template) render(name string, params map[string]string) string {
	var b strings.Builder
	for _, p := range t.parts {
		if p.path == nil {
			b.WriteString(p.text)
			continue
		}
		v := lookupPath(p.path, name, params)
		if !p.raw {
			v = escapeHandlebars(v)
		}
		b.WriteString(v)
	}
	return b.String()
}

func lookupPath(path []string, name string, params map[string]string) string {
	switch {
	case len(path) == 1 && path[0] == "name":
		return name
	case len(path) == 2 && path[0] == "parameters":
		return params[path[1]]
	}
	return ""
}

// escapeHandlebars is Handlebars' escapeExpression: & < > " ' ` =.
func escapeHandlebars(s string) string {
	s = html.EscapeString(s) // & < > " '  (' as &#39;)
	s = strings.ReplaceAll(s, "&#39;", "&#x27;")
	s = strings.ReplaceAll(s, "`", "&#x60;")
	return strings.ReplaceAll(s, "=", "&#x3D;")
}

// Template is a democratic-csi Handlebars template (nameTemplate,
// datasetProperties, comment templates) for backends built on this package.
type Template struct{ t template }

// ParseTemplate parses a template; the error names what is unsupported.
func ParseTemplate(s string) (*Template, error) {
	t, err := parseTemplate(s)
	if err != nil {
		return nil, err
	}
	return &Template{t: t}, nil
}

// Render fills in the volume name and StorageClass parameters.
func (t *Template) Render(name string, params map[string]string) string {
	return t.t.render(name, params)
}
