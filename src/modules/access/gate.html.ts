/**
 * The access gate's pages: the sign-in form shown instead of a book whose
 * access list is in force, and the answers after an address is submitted or
 * a link is opened. Plain HTML forms, no script, so the gate works with the
 * reader's strict Content-Security-Policy and without JavaScript.
 */
import { escapeHtml, NOTICE_CSS } from '../reader/reader.html.ts';

const GATE_CSS =
  'form{margin-top:1rem;display:flex;gap:.5rem;flex-wrap:wrap}label{flex-basis:100%;font-weight:600}' +
  'input{flex:1 1 14rem;font:inherit;padding:.55rem .7rem;border:1px solid #8a8a95;border-radius:8px}' +
  'button{font:inherit;padding:.55rem 1.1rem;border:0;border-radius:8px;background:#2f3a8f;color:#fff;cursor:pointer}' +
  'button:focus-visible,input:focus-visible{outline:3px solid #7aa2ff;outline-offset:2px}.error{color:#a1182c}';

export interface GatePageInput {
  nonce: string;
  bookName: string;
  title: string;
  /** Paragraphs before the form. */
  message: string;
  /** Shown in red (a refused address, an expired link). */
  error?: string;
  /** The form's target; no form when absent. */
  action?: string;
  email?: string;
}

export function renderGatePage(input: GatePageInput): string {
  const form = input.action
    ? `<form method="post" action="${escapeHtml(input.action)}"><label for="email">Your e-mail address</label>` +
      `<input id="email" name="email" type="email" required maxlength="255" autocomplete="email" value="${escapeHtml(input.email ?? '')}">` +
      `<button type="submit">Send me a link</button></form>`
    : '';
  return (
    `<!doctype html><html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">` +
    `<meta name="robots" content="noindex"><link rel="icon" href="data:,"><title>${escapeHtml(input.title)}</title>` +
    `<style nonce="${input.nonce}">${NOTICE_CSS}${GATE_CSS}</style></head>` +
    `<body><main><h1>${escapeHtml(input.title)}</h1><p class="book">${escapeHtml(input.bookName)}</p>` +
    `<p>${escapeHtml(input.message)}</p>` +
    (input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : '') +
    `${form}</main></body></html>`
  );
}
