package signin

import (
	"context"
	"net/http"

	"worldid/internal/leaf/page"
	"worldid/record"
)

// The page of a sign-in that is over, shown to whoever opens its link: the
// browser that started it has lost its cookie by then (cleared on finish
// and cancel, expired with the request), so the page tells the true state
// rather than "another browser".

type endedPageData struct {
	page.Head
	AppName, State, RestartURL string
	ExpiresUnix                int64
	Code                       string // for the application's support
}

// ended reports whether state is one in which the sign-in is over.
func ended(state string) bool {
	return state == record.SigninFinished || state == record.SigninCancelled || state == stateExpired
}

// endedPage shows an ended sign-in in its state: finished (already
// finished, expiring its cookie), cancelled (expiring its cookie) or
// expired; the latter two offer "Start again", the same authorization
// request. Finished and cancelled answer 400 already_completed, expired
// 410 expired.
func (f *Flow) endedPage(ctx context.Context, w http.ResponseWriter, req pendingRequest, state string) {
	name := req.ClientID
	if app, err := f.store.App(ctx, req.ClientID); err == nil {
		name = app.Name
	}
	data := endedPageData{AppName: name, State: state, ExpiresUnix: req.Expires, Code: "already_completed"}
	status := http.StatusBadRequest
	if state == stateExpired {
		status, data.Code = http.StatusGone, "expired"
	} else {
		f.clearBindingCookie(w, req.ID)
	}
	if state != record.SigninFinished {
		data.RestartURL = f.provider.RestartURL(req.Request)
	}
	f.out.RenderPage(w, status, page.Ended, func(base page.Head) any {
		data.Head = base
		return data
	})
}
