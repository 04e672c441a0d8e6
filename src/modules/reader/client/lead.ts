/// <reference lib="dom" />
/// <reference lib="dom.iterable" />
/**
 * The book's lead form (ReaderData.lead): a dialog that opens once the
 * reader reaches its page, at most once per book and browser session.
 * Sent to <base>/lead with the session's id, so the submission identifies
 * the reader for the rest of the visit.
 */
import type { ReaderData } from '../reader.types.ts';
import { h } from './dom.ts';
import type { Tracker } from './tracking.ts';

const LABELS = { name: 'Name', email: 'E-mail', phone: 'Phone', company: 'Company', message: 'Message' } as const;
const INPUT_TYPES = { name: 'text', email: 'email', phone: 'tel', company: 'text', message: '' } as const;
const AUTOCOMPLETE = { name: 'name', email: 'email', phone: 'tel', company: 'organization', message: 'off' } as const;

function remembered(key: string): boolean {
  try {
    return sessionStorage.getItem(key) !== null;
  } catch {
    return false;
  }
}

function remember(key: string, value: string): void {
  try {
    sessionStorage.setItem(key, value);
  } catch {
    // storage unavailable (private mode, sandboxed frame): the form may show again
  }
}

export function setupLeadForm(data: ReaderData, tracker: Tracker): void {
  const form = data.lead;
  if (!form) return;
  const storageKey = `flipbook-lead:${data.id}`;
  if (remembered(storageKey)) return;
  const after = Math.min(form.after, data.pages.length);

  const dialog = h('dialog', 'panel lead', { id: 'dlg-lead', 'aria-labelledby': 'dlg-lead-h' });
  const head = dialog.appendChild(h('div', 'panel-head'));
  head.appendChild(h('h2', '', { id: 'dlg-lead-h' })).textContent = form.title;
  const close = head.appendChild(h('button', 'btn close', { type: 'button', 'aria-label': 'Close', title: 'Close' }));
  close.textContent = '×';
  const body = dialog.appendChild(h('div', 'panel-body'));
  if (form.text) body.appendChild(h('p')).textContent = form.text;
  const el = body.appendChild(h('form', 'lead-form', { novalidate: '' }));
  const inputs = new Map<string, HTMLInputElement | HTMLTextAreaElement>();
  for (const [name, required] of form.fields) {
    const id = `lead-${name}`;
    const row = el.appendChild(h('div', 'lead-row'));
    row.appendChild(h('label', '', { for: id })).textContent = `${LABELS[name]}${required ? ' *' : ''}`;
    const input = name === 'message' ? h('textarea', '', { rows: '3', maxlength: '5000' }) : h('input', '', { type: INPUT_TYPES[name], maxlength: name === 'phone' ? '64' : '255' });
    input.id = id;
    input.name = name;
    input.setAttribute('autocomplete', AUTOCOMPLETE[name]);
    if (required) input.required = true;
    row.append(input);
    inputs.set(name, input);
  }
  const status = el.appendChild(h('p', 'lead-status', { role: 'status', 'aria-live': 'polite' }));
  const submit = el.appendChild(h('button', 'lead-submit', { type: 'submit' }));
  submit.textContent = 'Send';
  document.body.append(dialog);

  const dismiss = (): void => {
    remember(storageKey, 'dismissed');
    dialog.close();
  };
  close.addEventListener('click', dismiss);
  dialog.addEventListener('cancel', () => remember(storageKey, 'dismissed'));

  el.addEventListener('submit', (event) => {
    event.preventDefault();
    if (!el.reportValidity()) return;
    const values: Record<string, string> = {};
    for (const [name, input] of inputs) if (input.value.trim()) values[name] = input.value.trim();
    submit.disabled = true;
    status.textContent = 'Sending…';
    const seq = tracker.nextSeq();
    void fetch(`${data.base}/lead`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      credentials: 'same-origin',
      body: JSON.stringify({ session_id: tracker.session, seq, ...values, page: tracker.current(), context: tracker.context }),
    }).then(async (response) => {
      if (response.ok) {
        remember(storageKey, 'sent');
        el.replaceChildren(h('p', 'lead-thanks'));
        el.firstElementChild!.textContent = 'Thank you!';
        window.setTimeout(() => dialog.close(), 1500);
        return;
      }
      const problem = (await response.json().catch(() => null)) as { error?: { message?: string; details?: Record<string, string[]> } } | null;
      const details = problem?.error?.details;
      status.textContent = details ? Object.values(details).flat().join(' ') : (problem?.error?.message ?? 'Sending failed; please try again.');
    }).catch(() => {
      status.textContent = 'Sending failed; please check your connection and try again.';
    }).finally(() => {
      submit.disabled = false;
    });
  });

  let shown = false;
  tracker.onPages((pages) => {
    // Not over a dialog the reader opened: the next page turn tries again.
    if (shown || !pages.some((p) => p >= after) || document.querySelector('dialog[open]')) return;
    shown = true;
    dialog.showModal();
  });
}
