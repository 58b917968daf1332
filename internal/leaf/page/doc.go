// Package page renders the HTML pages of Sign in with World ID: the wait
// page (a pending sign-in), the expired page, the error page and the
// self-submitting form_post response (OAuth 2.0 Form Post Response Mode
// §2). Each page is one template in templates/ (sharing templates/head.html),
// styled by the one stylesheet style.css; all are embedded in the binary.
//
// Every response gets a fresh 128-bit nonce (base64url) from the injected
// reader. The stylesheet and the only scripts (the wait page's status
// polling, the form_post page's submit) are inlined under that nonce, and
// the Content-Security-Policy allows nothing else: default-src 'none';
// style-src and (wait, form_post) script-src the nonce; connect-src 'self'
// on the wait page; form-action 'none' on the pages without a form that
// leaves; base-uri 'none'; frame-ancestors 'none'. Pages are rendered into
// memory first, so a template failure never leaves half a page, and are
// sent with Cache-Control: no-store, X-Frame-Options: DENY and
// Referrer-Policy: no-referrer. The templates are html/template, so every
// value is escaped for its context; the caller marks only server-made SVG
// and validated URLs as trusted.
//
// Not done: the package knows nothing of OpenID Connect or the sign-in
// protocol (it imports only the standard library); the caller decides what
// to show. No external assets, no localisation.
package page
