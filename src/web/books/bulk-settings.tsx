/**
 * Bulk settings: reader settings applied to many books at once through the
 * API's bulk settings batches. The person chooses the books (all of the
 * workspace's, or some, preselected from the books list's selection), sees
 * what they share and where they differ (the summary operation), picks the
 * settings to change, and follows the batch to its end with each book's
 * outcome in words; cancel while it runs, retry the failed ones after.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import type { paths } from '@flipbook/client';
import { call, client, rank, role, type DataOf, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { Field, TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { Select } from '../components/select.tsx';
import { Table } from '../components/table.tsx';
import { notify } from '../components/toast.tsx';
import { draftKey, useDraft } from '../draft.ts';

type Book = DataOf<'/v1/books', 'get'>[number];
type Summary = DataOf<'/v1/books/bulk-settings/summary', 'post'>;
type Batch = DataOf<'/v1/books/bulk-settings/batches/{batch}', 'get'>;
type Settings = paths['/v1/books/bulk-settings/batches']['post']['requestBody']['content']['application/json']['settings'];

/**
 * The API takes 1-100 books a batch (and a summary): each book's revision is checked against what was read, and a
 * batch ends in seconds. More are not sent as several batches: one "Apply" would then be several batches that can
 * each conflict, be cancelled or fail apart; the screen says so and offers the books a hundred at a time.
 */
const MAX_BOOKS = 100;

const ANIMATIONS = [
  { value: 'flip', label: 'Page flip' }, { value: 'scroll_view', label: 'Scroll' }, { value: 'slide', label: 'Slide' }, { value: 'fade', label: 'Fade' },
  { value: 'zoom', label: 'Zoom' }, { value: 'flick-through', label: 'Flick through' }, { value: 'cut', label: 'Cut' },
];
const ON_OFF = [{ value: 'true', label: 'On' }, { value: 'false', label: 'Off' }];

/** Every setting the screen changes: its bulk field, its words, and its values (the empty value leaves the books as they are). */
const FIELDS = [
  { field: 'animation_type', label: 'Animation', options: ANIMATIONS },
  { field: 'mobile_animation_type', label: 'Animation on phones', options: ANIMATIONS },
  { field: 'reading_direction', label: 'Reading direction', options: [{ value: 'ltr', label: 'Left to right' }, { value: 'rtl', label: 'Right to left' }] },
  { field: 'page_layout', label: 'Page layout', options: [{ value: 'auto', label: 'Automatic' }, { value: 'single', label: 'One page' }, { value: 'double', label: 'Two pages side by side' }] },
  { field: 'allow_fullscreen', label: 'Allow full screen', options: ON_OFF },
  { field: 'open_fullscreen_by_default', label: 'Open in full screen', options: ON_OFF },
  { field: 'flip_sound', label: 'Page-turn sound', options: ON_OFF },
  { field: 'downloadable_pdf', label: 'Downloads', options: [{ value: 'false', label: 'Off' }, { value: 'full', label: 'The whole document' }, { value: 'single', label: 'The page shown' }, { value: 'spread', label: 'The spread shown' }] },
  { field: 'share_social_media', label: 'Sharing buttons', options: ON_OFF },
  { field: 'copyright_enabled', label: 'Show the copyright line', options: ON_OFF },
  { field: 'made_with_badge_enabled', label: 'Show the “Made with Flipbook” badge', options: ON_OFF },
  { field: 'image_display', label: 'Background image', options: [{ value: 'repeat', label: 'Repeated' }, { value: 'center/cover', label: 'Centred, covering the area' }] },
] as const;

/**
 * The settings typed in: each "Leave as they are" until "Set to" (or "Remove", where the API takes an empty value)
 * is chosen. `clear` is what "Remove" sends; without it the setting cannot be removed (a book needs a name).
 */
const TEXTS = [
  { field: 'title', label: 'Name', hint: 'Every chosen book gets this name.', kind: 'text' },
  { field: 'description', label: 'Description', kind: 'textarea', clear: null },
  { field: 'background', label: 'Background', hint: 'A CSS colour or gradient, or an image URL.', kind: 'text', clear: null },
  { field: 'watermark', label: 'Watermark', hint: 'Text over every page.', kind: 'text', clear: '' },
  { field: 'autoplay_interval', label: 'Slideshow', hint: 'Seconds a view, 2 to 120.', kind: 'number', clear: null },
  { field: 'pdf_password', label: 'Download password', hint: 'Asked before a download; never shown again.', kind: 'password', clear: null },
  { field: 'magic_link_message', label: 'Sign-in message', hint: 'Shown to readers asked to sign in (access list).', kind: 'textarea', clear: '' },
  { field: 'magic_link_error_message', label: 'Sign-in refusal message', hint: 'Shown to an address not on the list.', kind: 'textarea', clear: '' },
  { field: 'pdf_privacy_status', label: 'Privacy label', hint: 'Up to 50 characters kept with each book (the API’s pdf_privacy_status) for your own systems; the reader does not use it.', kind: 'text', clear: '' },
] as const satisfies readonly { field: string; label: string; hint?: string; kind: string; clear?: null | '' }[];

const ACCESS = [
  { value: 'keep', label: 'On: only people on each book’s own list' },
  { value: 'clear', label: 'Off: anyone with the link (the lists are emptied)' },
  { value: 'replace', label: 'On, with this list for every book' },
];

type Field = (typeof FIELDS)[number]['field'];
/** Choices by field; `text:<field>` is "set" or "clear" and `value:<field>` its value; `access` and `access_list` the access list. */
type Form = Partial<Record<string, string>>;

const ITEM_WORDS: Record<Batch['items'][number]['status'], string> = {
  pending: 'Waiting', running: 'Being changed', succeeded: 'Changed', failed: 'Failed', cancelled: 'Cancelled, not changed',
};

/** The settings to send: the fields given a value, typed as the API takes them. */
function settingsOf(form: Form): Settings {
  const out: Record<string, unknown> = {};
  for (const { field } of FIELDS) {
    const v = form[field];
    if (!v) continue;
    out[field] = v === 'true' ? true : v === 'false' ? false : v;
  }
  for (const text of TEXTS) {
    const mode = form[`text:${text.field}`];
    const value = form[`value:${text.field}`] ?? '';
    if (mode === 'set') out[text.field] = text.kind === 'number' && /^\d+$/.test(value.trim()) ? Number(value) : text.field === 'title' ? value.trim() : value;
    else if (mode === 'clear' && 'clear' in text) out[text.field] = text.clear;
  }
  if (form.access === 'keep') out.eod_enabled = true;
  else if (form.access === 'clear') out.eod_enabled = false;
  else if (form.access === 'replace') out.eod_lists = (form.access_list ?? '').split(/[\s,;]+/).filter(Boolean);
  return out as Settings;
}

/** A summary value in words (the field's option label when it has one). */
function valueWords(field: string, value: unknown): string {
  const known = FIELDS.find((f) => f.field === field)?.options.find((o) => o.value === String(value));
  if (known) return known.label;
  if (value === null || value === undefined || value === '') return 'none';
  if (typeof value === 'boolean') return value ? 'On' : 'Off';
  const words = typeof value === 'string' ? value : JSON.stringify(value);
  return words.length > 80 ? `${words.slice(0, 79)}…` : words;
}
/** The summary's fields the screen shows: what it changes (the password as whether there is one, the access list as on or off). */
const SUMMARY_FIELDS: Record<string, string> = {
  ...Object.fromEntries(FIELDS.map((f) => [f.field, f.label])),
  ...Object.fromEntries(TEXTS.filter((t) => t.field !== 'pdf_password').map((t) => [t.field, t.label])),
  has_pdf_password: 'Download password',
  eod_enabled: 'Access list',
};
const fieldWords = (field: string) => SUMMARY_FIELDS[field] ?? field.replaceAll('_', ' ');

/** Every book of the workspace, page by page (the screen offers them all to choose from). */
async function readAllBooks() {
  const books: Book[] = [];
  let cursor: string | undefined;
  for (;;) {
    const request = client.GET('/v1/books', { params: { query: { limit: 100, sort: 'name', ...(cursor ? { cursor } : {}) } } });
    const result = await call(request.then((r) => ({ ...r, data: r.data ? { data: r.data } : undefined })));
    if (!result.ok) return result;
    books.push(...result.data.data);
    if (!result.data.meta.has_more || !result.data.meta.next_cursor) return { ok: true as const, data: books };
    cursor = result.data.meta.next_cursor;
  }
}

export default function BulkSettings() {
  const { query } = useLocation();
  const writes = rank(role.value) >= rank('editor');
  const preselected = (query.books ?? '').split(',').filter(Boolean);
  const [books, setBooks] = useState<Book[] | undefined>(undefined);
  const [booksProblem, setBooksProblem] = useState<Problem | null>(null);
  const [scope, setScope] = useState<'all' | 'chosen'>(preselected.length ? 'chosen' : 'all');
  const [chosen, setChosen] = useState<ReadonlySet<string>>(new Set(preselected));
  const [summary, setSummary] = useState<Summary | null>(null);
  const [summaryProblem, setSummaryProblem] = useState<Problem | null>(null);
  const [batch, setBatch] = useState<Batch | null>(null);
  const [batchProblem, setBatchProblem] = useState<Problem | null>(null);
  const [busy, setBusy] = useState(false);
  const draft = useDraft<Form>(draftKey('bulk-settings', 'workspace'), () => ({}), {
    // The download password is a secret: never kept in the browser.
    strip: (kept) => ({ ...kept, 'value:pdf_password': '' }),
    differs: (v) => Object.values(v).some(Boolean),
  });
  const form = draft.value;

  useEffect(() => {
    void readAllBooks().then((result) => {
      if (result.ok) setBooks(result.data);
      else setBooksProblem(result.problem);
    });
  }, []);

  const ids = books === undefined ? [] : scope === 'all' ? books.map((b) => b.random_id) : books.filter((b) => chosen.has(b.random_id)).map((b) => b.random_id);
  const tooMany = ids.length > MAX_BOOKS;
  const key = ids.join(',');

  // What the chosen books share and where they differ, read again whenever the choice changes.
  const generation = useRef(0);
  const readSummary = async () => {
    const mine = ++generation.current;
    if (ids.length === 0 || tooMany) {
      setSummary(null);
      setSummaryProblem(null);
      return;
    }
    const result = await call(client.POST('/v1/books/bulk-settings/summary', { body: { book_ids: ids } }));
    if (mine !== generation.current) return;
    setSummary(result.ok ? result.data : null);
    setSummaryProblem(result.ok ? null : result.problem);
  };
  useEffect(() => {
    void readSummary();
  }, [key]);

  // A batch running is read again every second until it ends (a cancelled one until its book in flight is done).
  const running = batch && (batch.status === 'queued' || batch.status === 'running' || (batch.status === 'cancelled' && !batch.finished_at));
  useEffect(() => {
    if (!running) return;
    const timer = setTimeout(async () => {
      const result = await call(client.GET('/v1/books/bulk-settings/batches/{batch}', { params: { path: { batch: batch.id } } }));
      if (result.ok) {
        setBatch(result.data);
        setBatchProblem(null);
        if (result.data.finished_at) void readSummary();
      } else setBatchProblem(result.problem);
    }, 1000);
    return () => clearTimeout(timer);
  }, [batch]);

  const apply = async (event: Event) => {
    event.preventDefault();
    if (busy || !summary) return;
    const settings = settingsOf(form);
    if (Object.keys(settings).length === 0) {
      return setBatchProblem({ status: 422, type: 'ValidationException', message: 'Choose at least one setting to change.', details: {}, retryAfterSeconds: null });
    }
    setBusy(true);
    const result = await call(client.POST('/v1/books/bulk-settings/batches', {
      body: { books: summary.books.map((b) => ({ id: b.id, settings_revision: b.settings_revision })), settings },
    }));
    setBusy(false);
    if (!result.ok) {
      setBatchProblem(result.problem);
      // A book changed meanwhile (409): read the summary again, so the next try applies over what the books are now.
      if (result.problem.status === 409) void readSummary();
      return;
    }
    setBatchProblem(null);
    setBatch(result.data);
    draft.saved({});
  };
  const cancel = async () => {
    if (!batch) return;
    setBusy(true);
    const result = await call(client.DELETE('/v1/books/bulk-settings/batches/{batch}', { params: { path: { batch: batch.id } } }));
    setBusy(false);
    if (result.ok) setBatch(result.data);
    setBatchProblem(result.ok ? null : result.problem);
  };
  const retry = async () => {
    if (!batch) return;
    setBusy(true);
    const result = await call(client.POST('/v1/books/bulk-settings/batches/{batch}/retry', { params: { path: { batch: batch.id } } }));
    setBusy(false);
    if (result.ok) {
      setBatch(result.data);
      notify('The failed books are being changed again.');
    }
    setBatchProblem(result.ok ? null : result.problem);
  };

  const nameOf = (id: string) => books?.find((b) => b.random_id === id)?.name ?? summary?.books.find((b) => b.id === id)?.title ?? id;
  const choose = (first: string[]) => {
    setChosen(new Set(first));
    setScope('chosen');
  };
  const toggle = (id: string, on: boolean) => setChosen((s) => {
    const next = new Set(s);
    if (on) next.add(id);
    else next.delete(id);
    return next;
  });

  if (!writes) {
    return (
      <Page title="Bulk settings">
        <p class="alert">Only editors, admins and owners change the settings of books. Ask one of them.</p>
      </Page>
    );
  }
  return (
    <Page title="Bulk settings">
      <p>Change reader settings of many books at once. Settings you leave as they are keep each book's own value.</p>
      <ErrorMessage problem={booksProblem} title="The books could not be read" />
      {books === undefined && !booksProblem && <Loading what="books" />}
      {books !== undefined && (
        <form class="stack" onSubmit={apply} noValidate>
          <fieldset class="card stack">
            <legend>Books</legend>
            <label class="check">
              <input type="radio" name="scope" value="all" checked={scope === 'all'} onChange={() => setScope('all')} />
              All books ({books.length})
            </label>
            <label class="check">
              <input type="radio" name="scope" value="chosen" checked={scope === 'chosen'} onChange={() => setScope('chosen')} />
              Books I choose
            </label>
            {scope === 'chosen' && (
              <ul class="bulk-books" aria-label="Books to change">
                {books.map((b) => (
                  <li key={b.random_id}>
                    <label class="check">
                      <input type="checkbox" checked={chosen.has(b.random_id)} onChange={(event) => toggle(b.random_id, event.currentTarget.checked)} />
                      {b.name}
                    </label>
                  </li>
                ))}
              </ul>
            )}
            <p role="status">
              {ids.length === 0 ? 'No books chosen.' : `${ids.length} ${ids.length === 1 ? 'book' : 'books'} chosen.`}
              {tooMany && ` That is more than ${MAX_BOOKS}: one change reaches at most ${MAX_BOOKS} books, so that each is checked against the settings you see here and the change ends in seconds. Choose ${MAX_BOOKS} or fewer, apply, then choose the next ones.`}
            </p>
            {tooMany && (
              <Button onClick={() => choose(ids.slice(0, MAX_BOOKS))}>
                {`Choose the first ${MAX_BOOKS} of them`}
              </Button>
            )}
          </fieldset>

          <section class="card stack" aria-labelledby="bulk-now">
            <h2 id="bulk-now">Their settings now</h2>
            <ErrorMessage problem={summaryProblem} title="Their settings could not be read" />
            {summary ? <SummaryTable summary={summary} nameOf={nameOf} /> : <p class="hint">{tooMany ? `Shown for at most ${MAX_BOOKS} books.` : 'Choose books to see what they share.'}</p>}
          </section>

          <fieldset class="card stack">
            <legend>Change</legend>
            <DraftNotice restored={draft.restored} onDiscard={() => draft.discard({})} />
            {FIELDS.map(({ field, label, options }) => (
              <Select key={field} label={label} value={form[field] ?? ''} options={[{ value: '', label: 'Leave as they are' }, ...options]}
                onValue={(v) => draft.set((f) => ({ ...f, [field]: v }))} errors={fieldErrors(batchProblem, `settings.${field}`) ?? fieldErrors(batchProblem, field)} />
            ))}
            {TEXTS.map((text) => (
              <TextSetting key={text.field} text={text} form={form} set={(name, v) => draft.set((f) => ({ ...f, [name]: v }))}
                errors={fieldErrors(batchProblem, `settings.${text.field}`) ?? fieldErrors(batchProblem, text.field)} />
            ))}
            <Select label="Access list" value={form.access ?? ''} options={[{ value: '', label: 'Leave as they are' }, ...ACCESS]}
              hint="Who may read: on, only the addresses and domains on a book’s list, after signing in by e-mail."
              onValue={(v) => draft.set((f) => ({ ...f, access: v }))} errors={fieldErrors(batchProblem, 'settings.eod_enabled') ?? fieldErrors(batchProblem, 'eod_enabled')} />
            {form.access === 'replace' && (
              <Field label="The list for every book" hint="E-mail addresses and domains (example.com), one a line." errors={fieldErrors(batchProblem, 'settings.eod_lists') ?? fieldErrors(batchProblem, 'eod_lists')}>
                {(control) => <textarea {...control} rows={4} value={form.access_list ?? ''} onInput={(event) => { const v = event.currentTarget.value; draft.set((f) => ({ ...f, access_list: v })); }} />}
              </Field>
            )}
          </fieldset>
          <ErrorMessage problem={batchProblem} shownFields={['stale_books', 'current_settings_revisions', ...[...FIELDS, ...TEXTS].flatMap((f) => [f.field, `settings.${f.field}`]), 'eod_enabled', 'eod_lists', 'settings.eod_enabled', 'settings.eod_lists']} title="The settings were not applied" />
          {batchProblem?.status === 409 && batchProblem.details.stale_books && (
            <p class="alert" role="status">
              {`Changed elsewhere meanwhile: ${batchProblem.details.stale_books.map(nameOf).join(', ')}. Their settings were read again above; apply again to change them as they are now.`}
            </p>
          )}
          <Button type="submit" variant="primary" busy={busy && !batch} disabled={!summary || !!running}>
            {`Apply to ${ids.length} ${ids.length === 1 ? 'book' : 'books'}`}
          </Button>
        </form>
      )}
      {batch && <BatchProgress batch={batch} nameOf={nameOf} busy={busy} onCancel={cancel} onRetry={retry} />}
    </Page>
  );
}

function SummaryTable({ summary, nameOf }: { summary: Summary; nameOf: (id: string) => string }) {
  const common = Object.entries(summary.settings.common).filter(([f]) => f in SUMMARY_FIELDS);
  const differing = Object.entries(summary.settings.differing).filter(([f]) => f in SUMMARY_FIELDS);
  return (
    <Table caption="The chosen books' settings" hideCaption head={<tr><th scope="col">Setting</th><th scope="col">Value</th></tr>}>
        {common.map(([field, value]) => (
          <tr key={field}><th scope="row">{fieldWords(field)}</th><td>{`All: ${valueWords(field, value)}`}</td></tr>
        ))}
        {differing.map(([field, values]) => (
          <tr key={field}>
            <th scope="row">{fieldWords(field)}</th>
            <td>{`Differs: ${values.map((v) => `${nameOf(v.book_id)}: ${valueWords(field, v.value)}`).join('; ')}`}</td>
          </tr>
        ))}
    </Table>
  );
}

function BatchProgress({ batch, nameOf, busy, onCancel, onRetry }: { batch: Batch; nameOf: (id: string) => string; busy: boolean; onCancel: () => void; onRetry: () => void }) {
  const p = batch.progress;
  const done = !!batch.finished_at;
  const words = batch.status === 'cancelled' && !done
    ? `Cancelling: the book being changed is finished first; ${p.cancelled} not changed.`
    : batch.status === 'queued'
    ? `Waiting to start: ${p.total} ${p.total === 1 ? 'book' : 'books'}.`
    : batch.status === 'running'
      ? `Changing the books: ${p.total - p.pending} of ${p.total} done.`
      : batch.status === 'cancelled'
        ? `Cancelled: ${p.succeeded} changed, ${p.failed} failed, ${p.cancelled} not changed.`
        : p.failed === 0
          ? `Done: all ${p.total} ${p.total === 1 ? 'book was' : 'books were'} changed.`
          : `Done: ${p.succeeded} changed, ${p.failed} failed.`;
  return (
    <section class="card stack" aria-labelledby="bulk-progress">
      <h2 id="bulk-progress">{batch.retry_of_batch_id ? 'Retry of the failed books' : 'Applying the settings'}</h2>
      <progress max={p.total || 1} value={p.total - p.pending} aria-label="Books done" />
      <p role="status">{words}</p>
      <ul aria-label="Each book">
        {batch.items.map((item) => (
          <li key={item.book_id}>
            <strong>{nameOf(item.book_id)}</strong>: {ITEM_WORDS[item.status]}
            {item.error && ` (${item.error.message})`}
          </li>
        ))}
      </ul>
      {!done && batch.status !== 'cancelled' && <Button onClick={onCancel} busy={busy}>Cancel</Button>}
      {done && p.failed > 0 && <Button onClick={onRetry} busy={busy}>Retry the failed books</Button>}
    </section>
  );
}

/** A text setting: "Leave as they are", "Set to" (then its field) or "Remove". */
function TextSetting({ text, form, set, errors }: { text: (typeof TEXTS)[number]; form: Form; set: (name: string, value: string) => void; errors: string[] | undefined }) {
  const mode = form[`text:${text.field}`] ?? '';
  const value = form[`value:${text.field}`] ?? '';
  const options = [{ value: '', label: 'Leave as they are' }, { value: 'set', label: 'Set to…' }, ...('clear' in text ? [{ value: 'clear', label: 'Remove' }] : [])];
  return (
    <div class="stack">
      <Select label={text.label} value={mode} options={options} onValue={(v) => set(`text:${text.field}`, v)} errors={mode === 'set' ? undefined : errors} />
      {mode === 'set' && (text.kind === 'textarea'
        ? (
          <Field label={`New ${text.label.toLowerCase()}`} hint={'hint' in text ? text.hint : undefined} errors={errors}>
            {(control) => <textarea {...control} rows={3} value={value} onInput={(event) => set(`value:${text.field}`, event.currentTarget.value)} />}
          </Field>
        )
        : (
          <TextInput label={`New ${text.label.toLowerCase()}`} hint={'hint' in text ? text.hint : undefined} type={text.kind === 'password' ? 'password' : 'text'}
            inputMode={text.kind === 'number' ? 'numeric' : undefined} autoComplete={text.kind === 'password' ? 'new-password' : 'off'}
            value={value} onValue={(v) => set(`value:${text.field}`, v)} errors={errors} />
        ))}
    </div>
  );
}
