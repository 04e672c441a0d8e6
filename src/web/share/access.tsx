/**
 * Access: who may read a book (anyone with the link, or only the people on
 * its access list, who sign in with a link sent by e-mail), the list itself
 * (add, remove, import a pasted list or a CSV file with a preview), the
 * messages of the sign-in page, and the websites allowed to embed it.
 */
import { useEffect, useId, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso/router';
import { call, client, rank, role, type DataOf, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { Field, TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { notify } from '../components/toast.tsx';
import { draftKey, useDraft } from '../draft.ts';
import { formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';
import { bookHref, type Book } from '../books/book-facts.ts';
import { rowsFromCsv, rowsFromText, type SourceRow } from './access-import.ts';

type Entry = DataOf<'/v1/subscribers', 'get'>[number];
type EmbedDomain = DataOf<'/v1/books/{book}/embed-domains', 'get'>[number];
type ImportRow = DataOf<'/v1/subscribers/import', 'post'>[number];

const PER_PAGE = 200;
/** The API takes at most this many entries a request; a longer list is sent in parts. */
const IMPORT_CHUNK = 1000;

export default function Access() {
  const { params } = useRoute();
  const bookId = params.bookId!;
  const book = useResource(() => call(client.GET('/v1/books/{book}', { params: { path: { book: bookId } } })));
  if (!book.data) {
    return (
      <Page title="Access">
        {book.loading && <Loading what="the book" />}
        <ErrorMessage problem={book.problem} title="The book could not be read" />
      </Page>
    );
  }
  return <AccessScreen book={book.data} reload={book.reload} />;
}

function AccessScreen({ book, reload }: { book: Book; reload: () => Promise<void> }) {
  const writes = rank(role.value) >= rank('editor');
  const list = useAccessList(book.random_id);
  // Every list change may move the book's flags (and so its settings_revision): read it again after one.
  const changed = async () => {
    await Promise.all([list.reload(), reload()]);
  };
  return (
    <Page title={`Access: ${book.name}`}>
      <p><a href={bookHref(book)}>Back to the book</a> · <a href={`${bookHref(book)}/share`}>Share and embed</a></p>
      <AccessMode book={book} total={list.total} writes={writes} onChanged={changed} />
      <section class="card stack" aria-labelledby="list-heading">
        <h2 id="list-heading">Access list</h2>
        <p>Addresses and domains whose people may read the book. A domain (example.com) admits every address at it and at its subdomains.</p>
        <AccessEntries book={book} list={list} writes={writes} onChanged={changed} />
        {writes && <AddEntry book={book} onChanged={changed} />}
        {writes && <ImportEntries book={book} onChanged={changed} />}
      </section>
      <SignInMessages book={book} writes={writes} reload={reload} />
      <EmbedDomains book={book} writes={writes} onChanged={reload} />
    </Page>
  );
}

// ---- the access mode ---------------------------------------------------------------

function AccessMode({ book, total, writes, onChanged }: { book: Book; total: number | null; writes: boolean; onChanged: () => Promise<void> }) {
  const listed = book.settings.eod_enabled;
  const [mode, setMode] = useState<'anyone' | 'list'>(listed ? 'list' : 'anyone');
  const [opening, setOpening] = useState(false);
  useEffect(() => setMode(listed ? 'list' : 'anyone'), [listed]);
  const choose = (next: 'anyone' | 'list') => {
    if (next === 'anyone' && listed) setOpening(true);
    else setMode(next);
  };
  return (
    <section class="card stack" aria-labelledby="mode-heading">
      <h2 id="mode-heading">Who can read</h2>
      {writes ? (
        <fieldset>
          <legend>Access mode</legend>
          <label class="check">
            <input type="radio" name="access-mode" checked={mode === 'anyone'} onChange={() => choose('anyone')} />
            Anyone with the link
          </label>
          <label class="check">
            <input type="radio" name="access-mode" checked={mode === 'list'} onChange={() => choose('list')} />
            Only people on the access list (they sign in with a link sent by e-mail)
          </label>
        </fieldset>
      ) : (
        <p>Access mode: <strong>{listed ? 'Only people on the access list' : 'Anyone with the link'}</strong></p>
      )}
      {listed && <p>Readers sign in: the book asks for their e-mail address and mails a one-time link to those on the list.</p>}
      {!listed && mode === 'list' && (
        <p class="alert" role="status">The access list is not in force until it has an entry: add an address or a domain below. Until then anyone with the link can read the book.</p>
      )}
      {!listed && mode === 'anyone' && <p>Anyone who has the link (or the embed) can read the book.</p>}
      {opening && (
        <Confirm
          title="Open the book to anyone with the link?"
          confirmLabel="Remove the access list"
          onClose={() => setOpening(false)}
          onConfirm={async () => {
            const result = await call(client.POST('/v1/subscribers/clear', { body: { book_id: book.random_id } }));
            if (result.ok) {
              notify(`The access list was removed (${result.data.removed} ${result.data.removed === 1 ? 'entry' : 'entries'}). Anyone with the link can read the book.`);
              await onChanged();
            }
            return result;
          }}
        >
          <p>This removes {total === null ? 'every entry' : `all ${total} ${total === 1 ? 'entry' : 'entries'}`} of the access list. Readers will no longer sign in.</p>
        </Confirm>
      )}
    </section>
  );
}

// ---- the list ----------------------------------------------------------------------

interface AccessList {
  entries: Entry[];
  total: number | null;
  problem: Problem | null;
  loading: boolean;
  hasMore: boolean;
  more: () => Promise<void>;
  reload: () => Promise<void>;
}

/** The book's entries, page by page (GET /v1/subscribers with the book's random_id as filter). */
function useAccessList(bookId: string): AccessList {
  const [state, setState] = useState<{ entries: Entry[]; page: number; lastPage: number; total: number | null; problem: Problem | null; loading: boolean }>({ entries: [], page: 0, lastPage: 1, total: null, problem: null, loading: true });
  const readWithMeta = async (page: number, keep: Entry[]) => {
    const request = client.GET('/v1/subscribers', { params: { query: { filter: bookId, 'pagination[per_page]': PER_PAGE, 'pagination[page]': page } } });
    setState((s) => ({ ...s, loading: true }));
    const result = await call(request);
    if (!result.ok) return setState((s) => ({ ...s, loading: false, problem: result.problem }));
    // `call` unwraps `data`; the paging facts are in the same answer's `meta`.
    const meta = (await request).data?.meta;
    // The filter also matches entries whose address contains the text: keep this book's own.
    const entries = result.data.filter((e) => e.book_id === bookId);
    setState({ entries: [...keep, ...entries], page, lastPage: meta?.last_page ?? page, total: meta?.total ?? null, problem: null, loading: false });
  };
  useEffect(() => {
    void readWithMeta(1, []);
  }, [bookId]);
  return {
    entries: state.entries,
    total: state.total,
    problem: state.problem,
    loading: state.loading,
    hasMore: state.page < state.lastPage,
    more: () => readWithMeta(state.page + 1, state.entries),
    reload: () => readWithMeta(1, []),
  };
}

function AccessEntries({ book, list, writes, onChanged }: { book: Book; list: AccessList; writes: boolean; onChanged: () => Promise<void> }) {
  const [removing, setRemoving] = useState<Entry | null>(null);
  return (
    <>
      <ErrorMessage problem={list.problem} title="The access list could not be read" />
      {list.loading && list.entries.length === 0 && <Loading what="the access list" />}
      {!list.loading && !list.problem && list.entries.length === 0 && <p class="empty">The access list is empty.</p>}
      {list.entries.length > 0 && (
        <>
          <p>{list.total === null ? '' : `${list.total} ${list.total === 1 ? 'entry' : 'entries'}`}</p>
          <ul class="item-list" aria-label="Access list">
            {list.entries.map((entry) => (
              <li key={entry.id} class="item">
                <div>
                  <p class="item-title">{entry.email}</p>
                  <p class="item-meta">{entry.type === 'domain' ? 'Domain: every address at it' : 'E-mail address'} · added {formatDateTime(entry.created_at)}</p>
                </div>
                {writes && <Button onClick={() => setRemoving(entry)}>Remove<Hidden> {entry.email}</Hidden></Button>}
              </li>
            ))}
          </ul>
        </>
      )}
      {list.hasMore && <Button onClick={list.more} busy={list.loading}>Show more entries</Button>}
      {removing && (
        <Confirm
          title={`Remove ${removing.email}?`}
          confirmLabel="Remove"
          onClose={() => setRemoving(null)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/subscribers/{subscriber}', { params: { path: { subscriber: removing.id } } }));
            if (result.ok) {
              notify(`${removing.email} was removed from the access list.`);
              await onChanged();
            }
            return result;
          }}
        >
          <p>{removing.type === 'domain' ? `People at ${removing.email}` : removing.email} will no longer be able to read “{book.name}”, from their next page on.</p>
        </Confirm>
      )}
    </>
  );
}

function AddEntry({ book, onChanged }: { book: Book; onChanged: () => Promise<void> }) {
  const draft = useDraft(draftKey('access-entry', book.random_id), () => ({ email: '' }), { differs: (v) => v.email !== '' });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const result = await call(client.POST('/v1/subscribers', { body: { book_id: book.random_id, email: draft.value.email } }));
    setBusy(false);
    setProblem(result.ok ? null : result.problem);
    if (result.ok) {
      draft.saved({ email: '' });
      notify(`${result.data.email} is on the access list.`);
      await onChanged();
    }
  };
  return (
    <form class="stack" onSubmit={add}>
      <TextInput label="E-mail address or domain" hint="ann@example.com, or example.com for everyone there." autoComplete="off" spellcheck={false} value={draft.value.email} onValue={(email) => draft.set({ email })} errors={fieldErrors(problem, 'email')} />
      <ErrorMessage problem={problem} shownFields={['email']} title="The entry was not added" />
      <Button type="submit" variant="primary" busy={busy}>Add to access list</Button>
    </form>
  );
}

// ---- import ------------------------------------------------------------------------

interface Preview {
  rows: (ImportRow & { where: string })[];
  source: SourceRow[];
}

const OUTCOME_WORDS: Record<ImportRow['outcome'], string> = { added: 'Will be added', listed: 'Already on the list', repeated: 'Repeated', invalid: 'Error' };

function ImportEntries({ book, onChanged }: { book: Book; onChanged: () => Promise<void> }) {
  const fileId = useId();
  const draft = useDraft(draftKey('access-import', book.random_id), () => ({ text: '' }), { differs: (v) => v.text !== '' });
  const [file, setFile] = useState<{ name: string; rows: SourceRow[] } | null>(null);
  const [preview, setPreview] = useState<Preview | null>(null);
  const [busy, setBusy] = useState(false);
  const [progress, setProgress] = useState('');
  const [problem, setProblem] = useState<Problem | null>(null);
  const [fileProblem, setFileProblem] = useState('');

  const pick = async (input: HTMLInputElement) => {
    const chosen = input.files?.[0];
    setPreview(null);
    setFileProblem('');
    if (!chosen) return setFile(null);
    if (chosen.size > 5 * 1024 * 1024) {
      setFile(null);
      return setFileProblem(`“${chosen.name}” is larger than 5 MB: split it, or paste the addresses below.`);
    }
    const rows = rowsFromCsv(await chosen.text());
    if (rows.length === 0) setFileProblem(`“${chosen.name}” holds no addresses or domains.`);
    setFile({ name: chosen.name, rows });
  };

  /** Sends the rows in parts of 1,000 (dry run or not), joining the answers in order. */
  const send = async (source: SourceRow[], dryRun: boolean) => {
    const rows: Preview['rows'] = [];
    for (let start = 0; start < source.length; start += IMPORT_CHUNK) {
      const part = source.slice(start, start + IMPORT_CHUNK);
      if (source.length > IMPORT_CHUNK) setProgress(`${dryRun ? 'Checking' : 'Importing'} ${start + part.length} of ${source.length}…`);
      const result = await call(client.POST('/v1/subscribers/import', { body: { book_id: book.random_id, entries: part.map((r) => ({ email: r.value.slice(0, 255) })), dry_run: dryRun } }));
      if (!result.ok) return { ok: false as const, problem: result.problem, rows };
      rows.push(...result.data.map((r) => ({ ...r, where: part[r.row - 1]!.where })));
    }
    return { ok: true as const, rows };
  };

  const check = async (event: Event) => {
    event.preventDefault();
    const source = file ? file.rows : rowsFromText(draft.value.text);
    if (source.length === 0) {
      setProblem({ status: 0, type: 'EmptyImport', message: 'There is nothing to import: paste addresses or domains, or choose a CSV file.', details: {}, retryAfterSeconds: null });
      return;
    }
    setBusy(true);
    const result = await send(source, true);
    setBusy(false);
    setProgress('');
    setProblem(result.ok ? null : result.problem);
    if (result.ok) setPreview({ rows: result.rows, source });
  };

  const confirm = async () => {
    if (!preview) return;
    // Only the rows that will be added are sent again: errors and repeats were shown, and are left out.
    const adding = preview.rows.filter((r) => r.outcome === 'added').map((r) => preview.source[preview.rows.indexOf(r)]!);
    setBusy(true);
    const result = await send(adding, false);
    setBusy(false);
    setProgress('');
    if (!result.ok) return setProblem(result.problem);
    const added = result.rows.filter((r) => r.outcome === 'added').length;
    setPreview(null);
    setFile(null);
    draft.saved({ text: '' });
    notify(`${added} ${added === 1 ? 'entry was' : 'entries were'} added to the access list.`);
    await onChanged();
  };

  const counts = preview ? countOutcomes(preview.rows) : null;
  return (
    <section class="stack" aria-labelledby="import-heading">
      <h3 id="import-heading">Import a list</h3>
      <form class="stack" onSubmit={check}>
        <DraftNotice restored={draft.restored} what="list" onDiscard={() => draft.discard({ text: '' })} />
        <Field label="Addresses and domains" hint="One a line (commas and semicolons also separate them).">
          {(control) => <textarea {...control} rows={5} spellcheck={false} value={draft.value.text} onInput={(event) => { draft.set({ text: event.currentTarget.value }); setPreview(null); }} disabled={Boolean(file)} />}
        </Field>
        <div class="field">
          <label for={fileId}>Or a CSV file</label>
          <p class="hint" id={`${fileId}-hint`}>The column headed “email” (or “domain”), else the first column.</p>
          <input id={fileId} type="file" accept=".csv,text/csv,text/plain" aria-describedby={`${fileId}-hint`} onChange={(event) => void pick(event.currentTarget)} />
          {fileProblem && <p class="field-errors" role="alert">{fileProblem}</p>}
          {file && !fileProblem && <p class="hint">{file.rows.length} {file.rows.length === 1 ? 'value' : 'values'} read from “{file.name}”.</p>}
        </div>
        <ErrorMessage problem={problem} title="The list could not be checked" />
        <p class="hint" role="status">{progress}</p>
        <Button type="submit" busy={busy && !preview}>Preview import</Button>
      </form>
      {preview && counts && (
        <div class="stack" aria-labelledby="preview-title">
          <h4 id="preview-title">Preview</h4>
          <p role="status">
            {counts.added} will be added · {counts.listed} already on the list · {counts.repeated} repeated · {counts.invalid} with errors (not imported)
          </p>
          <div class="table-wrap import-preview" role="region" aria-labelledby="preview-caption" tabIndex={0}>
            <table>
              <caption id="preview-caption">Rows to import</caption>
              <thead><tr><th scope="col">Where</th><th scope="col">Value</th><th scope="col">Result</th></tr></thead>
              <tbody>
                {preview.rows.map((row, index) => (
                  <tr key={index} class={row.outcome === 'invalid' ? 'row-invalid' : undefined}>
                    <td>{row.where}</td>
                    <td class="cell-value">{row.input}</td>
                    <td>{OUTCOME_WORDS[row.outcome]}{row.message ? `: ${row.message}` : ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          <div class="actions">
            {counts.added > 0 && <Button variant="primary" busy={busy} onClick={confirm}>Import {counts.added} {counts.added === 1 ? 'entry' : 'entries'}</Button>}
            <Button onClick={() => setPreview(null)}>Cancel import</Button>
          </div>
        </div>
      )}
    </section>
  );
}

function countOutcomes(rows: readonly ImportRow[]) {
  const counts = { added: 0, listed: 0, repeated: 0, invalid: 0 };
  for (const row of rows) counts[row.outcome] += 1;
  return counts;
}

// ---- sign-in messages ---------------------------------------------------------------

type Messages = { magic_link_message: string; magic_link_error_message: string };

function SignInMessages({ book, writes, reload }: { book: Book; writes: boolean; reload: () => Promise<void> }) {
  const stored = (): Messages => ({ magic_link_message: book.settings.magic_link_message ?? '', magic_link_error_message: book.settings.magic_link_error_message ?? '' });
  const draft = useDraft(draftKey('sign-in-messages', book.random_id), stored, {
    base: book.settings_revision,
    differs: (v) => v.magic_link_message !== (book.settings.magic_link_message ?? '') || v.magic_link_error_message !== (book.settings.magic_link_error_message ?? ''),
  });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const set = (field: keyof Messages) => (value: string) => draft.set((v) => ({ ...v, [field]: value }));
  const save = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const body = { status: book.status as 'draft' | 'publish' | 'schedule', settings_revision: book.settings_revision, ...draft.value };
    const result = await call(client.PUT('/v1/books/{book}', { params: { path: { book: book.random_id } }, body }));
    setBusy(false);
    setProblem(result.ok ? null : result.problem);
    if (result.ok) {
      draft.saved({ magic_link_message: result.data.settings.magic_link_message ?? '', magic_link_error_message: result.data.settings.magic_link_error_message ?? '' });
      notify('The sign-in messages were saved.');
      await reload();
    }
  };
  return (
    <section class="card" aria-labelledby="messages-heading">
      <h2 id="messages-heading">Sign-in messages</h2>
      <p>What the sign-in page of the book says while the access list is in force.</p>
      {writes ? (
        <form class="stack" onSubmit={save}>
          <DraftNotice restored={draft.restored} what="messages" onDiscard={() => draft.discard(stored())} />
          {problem?.status === 409 ? (
            <div class="alert alert-error" role="alert">
              <p class="alert-title">Someone changed this book meanwhile</p>
              <p>Your messages were not saved, and their change was not overwritten. Read the book again; what you typed stays in the form, and the next “Save messages” applies it.</p>
              <Button onClick={async () => { await reload(); setProblem(null); }}>Read the book again</Button>
            </div>
          ) : (
            <ErrorMessage problem={problem} shownFields={['magic_link_message', 'magic_link_error_message']} title="The messages were not saved" />
          )}
          <Field label="Message on the sign-in page" hint="Shown above the e-mail field; at most 1,000 characters. Empty for the default." errors={fieldErrors(problem, 'magic_link_message')}>
            {(control) => <textarea {...control} rows={3} maxLength={1000} value={draft.value.magic_link_message} onInput={(event) => set('magic_link_message')(event.currentTarget.value)} />}
          </Field>
          <Field label="Message for an address not on the list" hint="Shown when someone not on the list asks for a link." errors={fieldErrors(problem, 'magic_link_error_message')}>
            {(control) => <textarea {...control} rows={3} maxLength={1000} value={draft.value.magic_link_error_message} onInput={(event) => set('magic_link_error_message')(event.currentTarget.value)} />}
          </Field>
          <Button type="submit" variant="primary" busy={busy}>Save messages</Button>
        </form>
      ) : (
        <dl class="facts">
          <dt>On the sign-in page</dt>
          <dd>{book.settings.magic_link_message || 'The default message'}</dd>
          <dt>For an address not on the list</dt>
          <dd>{book.settings.magic_link_error_message || 'The default message'}</dd>
        </dl>
      )}
    </section>
  );
}

// ---- embed domains ------------------------------------------------------------------

function EmbedDomains({ book, writes, onChanged }: { book: Book; writes: boolean; onChanged: () => Promise<void> }) {
  const domains = useResource(() => call(client.GET('/v1/books/{book}/embed-domains', { params: { path: { book: book.random_id } } })));
  const draft = useDraft(draftKey('embed-domain', book.random_id), () => ({ domain: '' }), { differs: (v) => v.domain !== '' });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [removing, setRemoving] = useState<EmbedDomain | null>(null);
  const add = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const result = await call(client.POST('/v1/books/{book}/embed-domains', { params: { path: { book: book.random_id } }, body: { domain: draft.value.domain } }));
    setBusy(false);
    setProblem(result.ok ? null : result.problem);
    if (result.ok) {
      draft.saved({ domain: '' });
      notify(`${result.data.domain} may embed the book.`);
      await Promise.all([domains.reload(), onChanged()]);
    }
  };
  return (
    <section class="card stack" aria-labelledby="domains-heading">
      <h2 id="domains-heading">Embed domains</h2>
      <p>Websites allowed to show the book in a frame (each with its subdomains). While the list is empty, any website may embed it. A direct visit to the link stays allowed: to choose who reads, use the access list.</p>
      <ErrorMessage problem={domains.problem} title="The embed domains could not be read" />
      {domains.data?.length === 0 && <p class="empty">Any website may embed the book.</p>}
      {domains.data && domains.data.length > 0 && (
        <ul class="item-list" aria-label="Embed domains">
          {domains.data.map((d) => (
            <li key={d.id} class="item">
              <div>
                <p class="item-title">{d.domain}</p>
                <p class="item-meta">With its subdomains · added {formatDateTime(d.created_at)}</p>
              </div>
              {writes && <Button onClick={() => setRemoving(d)}>Remove<Hidden> {d.domain}</Hidden></Button>}
            </li>
          ))}
        </ul>
      )}
      {writes && (
        <form class="stack" onSubmit={add}>
          <TextInput label="Website" hint="A host (shop.example.com) or a page's address, reduced to its host." autoComplete="off" spellcheck={false} value={draft.value.domain} onValue={(domain) => draft.set({ domain })} errors={fieldErrors(problem, 'domain')} />
          <ErrorMessage problem={problem} shownFields={['domain']} title="The website was not added" />
          <Button type="submit" busy={busy}>Add embed domain</Button>
        </form>
      )}
      {removing && (
        <Confirm
          title={`Remove ${removing.domain}?`}
          confirmLabel="Remove"
          onClose={() => setRemoving(null)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/books/{book}/embed-domains/{embedDomain}', { params: { path: { book: book.random_id, embedDomain: Number(removing.id) } } }));
            if (result.ok) {
              notify(`${removing.domain} was removed from the embed domains.`);
              await Promise.all([domains.reload(), onChanged()]);
            }
            return result;
          }}
        >
          <p>Pages on {removing.domain} will no longer show the book{domains.data?.length === 1 ? '; with the list empty, any website may embed it again' : ''}.</p>
        </Confirm>
      )}
    </section>
  );
}
