package mastoapi

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"time"

	"herald/outbox"
	"herald/store"
)

// Report is Mastodon's Report entity as its REST::ReportSerializer writes
// it (mastodon/mastodon app/serializers/rest/report_serializer.rb): ids
// as strings, the reported account in full.
type Report struct {
	ID            string    `json:"id"`
	ActionTaken   bool      `json:"action_taken"`
	ActionTakenAt Timestamp `json:"action_taken_at"`
	Category      string    `json:"category"`
	Comment       string    `json:"comment"`
	Forwarded     bool      `json:"forwarded"`
	CreatedAt     Timestamp `json:"created_at"`
	StatusIDs     []string  `json:"status_ids"`
	RuleIDs       []string  `json:"rule_ids"`
	TargetAccount Account   `json:"target_account"`
}

// reportCategories are Mastodon's (app/models/report.rb, enum category);
// "violation" needs rule ids, and Herald's instance has no rules.
var reportCategories = []string{"other", "spam", "legal", "violation"}

// errValidation is Mastodon's 422 for a record that fails its
// validations (Api::BaseController rescues ActiveRecord::RecordInvalid).
func errValidation(msg string) *Error {
	return Errorf(http.StatusUnprocessableEntity, "Validation failed: "+msg)
}

// createReport is POST /api/v1/reports (account_id, status_ids[],
// comment, forward, category, rule_ids[]), as Mastodon's
// Api::V1::ReportsController and ReportService do it: the caller reports
// an account, and some of its statuses, to this instance's moderators
// (the report queue, outbox.Publisher.Report); with forward, the report
// also goes to the account's server as a bare Flag from the instance
// actor, the caller never named (an account whose inbox cannot be
// resolved gets the report filed, not forwarded, and a note on it says
// so). An unknown account or a status that is
// not the account's or that the caller cannot see is 404; a comment over
// 1,000 characters, an unknown category or rule ids (the instance has no
// rules) are 422.
func (h *Handler) createReport(c *Call) error {
	ref, err := h.refByID(c.Ctx(), c.Params.Get("account_id"))
	if err != nil {
		return err
	}
	if ref.Local != nil {
		// Herald's reports are about remote accounts: a local actor is
		// the operator's to suspend (herald actor suspend).
		return errValidation("Target account is a local account (Herald's reports are about remote accounts)")
	}
	category, err := reportCategory(c.Params)
	if err != nil {
		return err
	}
	comment := c.Params.Get("comment")
	if n := len([]rune(comment)); n > 1000 {
		return errValidation("Comment is too long (maximum is 1000 characters)")
	}
	ids := c.Params.List("status_ids")
	posts, err := h.reportedPosts(c, ref.IRI, ids)
	if err != nil {
		return err
	}
	forward, _ := c.Params.Bool("forward")
	rep, err := h.Publisher.Report(c.Ctx(), c.Actor, outbox.ReportInput{Account: ref.IRI, Posts: posts, Comment: comment, Forward: forward,
		// Mastodon files the report whatever becomes of its forwarding.
		FileUnforwarded: true})
	var in *outbox.InputError
	if errors.As(err, &in) {
		return errValidation(in.Msg)
	}
	if err != nil {
		return err
	}
	acc, err := h.account(c.Ctx(), ref)
	if err != nil {
		return err
	}
	statusIDs := []string{}
	for _, id := range ids {
		if n, _ := ParseID(id); !slices.Contains(statusIDs, ID(n)) {
			statusIDs = append(statusIDs, ID(n))
		}
	}
	return c.JSON(Report{ID: ID(rep.ID), Category: category, Comment: rep.Comment, Forwarded: rep.FlagID != "",
		CreatedAt: Timestamp(h.Now()), StatusIDs: statusIDs, RuleIDs: []string{}, TargetAccount: acc})
}

// reportCategory is the report's category: "other" unless given;
// rule ids make it "violation", as Mastodon's ReportService does, and fail
// since the instance has no rules (GET /api/v1/instance/rules is empty).
func reportCategory(p *Params) (string, error) {
	category := p.Get("category")
	if rules := p.List("rule_ids"); len(rules) > 0 && !(len(rules) == 1 && rules[0] == "") {
		if category != "" && category != "violation" {
			return "", errValidation("Rule ids must be blank")
		}
		return "", errValidation("Rule ids is invalid")
	}
	switch {
	case category == "":
		return "other", nil
	case category == "violation":
		return "", errValidation("Rule ids is invalid")
	case !slices.Contains(reportCategories, category):
		return "", errValidation(fmt.Sprintf("Category is not included in the list (%s)", strings.Join(reportCategories, ", ")))
	}
	return category, nil
}

// reportedPosts turns the reported statuses' ids into their objects' ids,
// each a status of the account that the caller may see (Mastodon's
// ReportService finds them among AccountStatusesFilter's results for the
// reporter, deleted ones too, and answers 404 for any other): a status the
// caller cannot see is one that does not exist, as GET
// /api/v1/statuses/:id answers, so no report names it.
func (h *Handler) reportedPosts(c *Call, account string, ids []string) ([]string, error) {
	var posts []string
	for _, id := range ids {
		n, ok := ParseID(id)
		if !ok {
			return nil, ErrNotFound
		}
		st, err := h.DB.StatusByID(c.Ctx(), n)
		if errors.Is(err, store.ErrNotFound) || (err == nil && st.Author != account) {
			return nil, ErrNotFound
		}
		if err != nil {
			return nil, err
		}
		seen := *st
		seen.DeletedAt = time.Time{} // deleted since: still reportable (with_discarded)
		if ok, err := h.canSee(c.Ctx(), c.Actor, &seen); err != nil {
			return nil, err
		} else if !ok {
			return nil, ErrNotFound
		}
		if !slices.Contains(posts, st.IRI) {
			posts = append(posts, st.IRI)
		}
	}
	return posts, nil
}
