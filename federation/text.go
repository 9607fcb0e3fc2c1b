package federation

import (
	"html"
	"strings"
)

// SummaryHTML turns an operator's plain-text summary into the HTML that
// ActivityStreams' summary carries: escaped, one paragraph per blank-line
// separated block, line breaks kept.
func SummaryHTML(text string) string {
	text = strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	if text == "" {
		return ""
	}
	var b strings.Builder
	for _, para := range strings.Split(text, "\n\n") {
		para = strings.TrimSpace(para)
		if para == "" {
			continue
		}
		b.WriteString("<p>")
		b.WriteString(strings.ReplaceAll(html.EscapeString(para), "\n", "<br>"))
		b.WriteString("</p>")
	}
	return b.String()
}
