// Package page renders the HTML pages of Sign in with World ID: the wait
// page (a pending sign-in), the page of an ended sign-in (finished,
// cancelled or expired; the latter two with "Start again"), the error page,
// the self-submitting form_post response (OAuth 2.0 Form Post Response
// Mode §2), the device grant's page (RFC 8628 §3.3: a form for the user
// code, showing a code given in the link to compare, or the outcome of a
// device sign-in: signed in, refused, expired, already used) and the
// question "Sign out?" before a logout (a form that posts its hidden
// fields back). Each page is one template in templates/ (sharing the "head"
// and "brand" of templates/head.html), styled by the one stylesheet
// style.css; all are embedded in the binary.
//
// The pages are one centred card, light or dark after the browser's
// prefers-color-scheme (the QR code always dark on a white frame), with a
// visible focus ring on every control. The wait page shows the app's name,
// the host it returns to, the status line (role=status, aria-live=polite:
// announced), the QR code, "Open World App" (the connect URL; first on a
// narrow or touch screen, after the QR code otherwise),
// Cancel (above the fold on 1280×800, 1366×768 and 390×844), the expiry,
// what the app receives and the warning never to scan a code someone sent.
// Its script polls the status route and shows each state's line
// (statusLines; a message the flow gives replaces it); "Try again" (a
// POST of r to the retry route) replaces the spent request's QR code after
// a refused proof or a wallet error; any other state and any non-2xx
// answer reload the page so that the server shows the true state. The
// script counts the expiry down in the browser's local time; without
// scripts the page shows it in UTC and refreshes itself.
//
// Every response gets a fresh 128-bit nonce (base64url) from the injected
// reader. The stylesheet and the only scripts (the wait page's status
// polling, the form_post page's submit) are inlined under that nonce, and
// the Content-Security-Policy allows nothing else: default-src 'none';
// style-src and (wait, form_post) script-src the nonce; connect-src 'self'
// on the wait page; form-action 'self' on the device page, whose form
// posts to its own route (and is redirected to the wait page), 'none' on
// the pages without a form that leaves (the error and ended pages);
// base-uri 'none'; frame-ancestors 'none'. Pages are rendered into
// memory first, so a template failure never leaves half a page, and are
// sent with Cache-Control: no-store, X-Frame-Options: DENY and
// Referrer-Policy: no-referrer. The templates are html/template, so every
// value is escaped for its context; the caller marks only server-made SVG
// and validated URLs as trusted.
//
// Not done: the package knows nothing of OpenID Connect or the sign-in
// protocol (it imports only the standard library); the caller decides what
// to show. No external assets, no localisation, nothing for operators
// (the sign-in's sunset is in headers and logs, not on the pages).
package page
