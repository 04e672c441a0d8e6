import { useState } from 'preact/hooks';
import { useLocation, useRoute } from 'preact-iso/router';
import type { operations } from '@flipbook/client';
import { call, client, rank, role, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { Confirm } from '../components/confirm.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { Field, TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { DraftNotice } from '../components/draft-notice.tsx';
import { draftKey, useDraft } from '../draft.ts';
import { notify } from '../components/toast.tsx';
import { formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';
import { bookHref, bookStatus, STATUS_WORDS, type Book } from './book-facts.ts';
import { Conversion } from './conversion.tsx';

type OutlineEntry = { title: string; page: number | null; children?: OutlineEntry[] };

/** "2026-03-01T10:00" in the person's time zone, for a datetime-local input. */
function localInput(iso: string | null): string {
  if (!iso) return '';
  const d = new Date(iso);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}`;
}
/** A datetime-local value (the person's time zone) as an ISO instant. */
const fromLocal = (value: string): string | undefined => (value ? new Date(value).toISOString() : undefined);

const ZONE = Intl.DateTimeFormat().resolvedOptions().timeZone;

/** A book: the reader beside its facts; rename, describe, publish, schedule, expire, delete; outline and pages. */
export default function BookPage() {
  const { params } = useRoute();
  const bookId = params.bookId!;
  const book = useResource(() => call(client.GET('/v1/books/{book}', { params: { path: { book: bookId } } })));
  if (!book.data) {
    return (
      <Page title="Book">
        {book.loading && <Loading what="the book" />}
        <ErrorMessage problem={book.problem} title="The book could not be read" />
      </Page>
    );
  }
  return <BookScreen book={book.data} reload={book.reload} />;
}

function BookScreen({ book, reload }: { book: Book; reload: () => Promise<void> }) {
  const { route } = useLocation();
  const writes = rank(role.value) >= rank('editor');
  const status = bookStatus(book);
  const [deleting, setDeleting] = useState(false);
  const readerShown = status === 'published' && book.page_images_status === 'ready' && book.preview_url;
  return (
    <Page title={book.name}>
      <div class="book-layout">
        <section aria-labelledby="reader-heading">
          <h2 id="reader-heading">Reader</h2>
          {readerShown
            ? <iframe class="reader-frame" src={book.preview_url!} title={`Reader: ${book.name}`} allow="fullscreen" />
            : <p class="empty">The reader shows the book here once it is published and its pages are ready. Its pages are listed below.</p>}
        </section>
        <section class="card" aria-labelledby="facts-heading">
          <h2 id="facts-heading">Facts</h2>
          <dl class="facts">
            <dt>Status</dt>
            <dd>{STATUS_WORDS[status]}</dd>
            <dt>Conversion</dt>
            <dd><Conversion book={book} onFinished={() => void reload()} /></dd>
            <dt>Pages</dt>
            <dd>{book.page_count}</dd>
            <dt>Published</dt>
            <dd>{formatDateTime(book.published_date, 'Not yet')}</dd>
            <dt>Expires</dt>
            <dd>{formatDateTime(book.expires_at)}</dd>
            <dt>Created</dt>
            <dd>{formatDateTime(book.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{formatDateTime(book.updated_at)}</dd>
            {book.preview_url && (
              <>
                <dt>Public link</dt>
                <dd><a href={book.preview_url}>{book.preview_url}</a></dd>
              </>
            )}
          </dl>
          <ul class="book-links">
            <li><a href={`${bookHref(book)}/settings`}>Reader settings</a></li>
            <li><a href={`${bookHref(book)}/share`}>Share and embed</a></li>
            <li><a href={`${bookHref(book)}/share#embed-section`}>Embed</a></li>
            <li><a href={`${bookHref(book)}/access`}>Access</a></li>
            <li><a href={`${bookHref(book)}/lead-form`}>Lead form</a></li>
          </ul>
        </section>
      </div>
      {writes && <Details book={book} reload={reload} />}
      {writes && <Publishing book={book} reload={reload} />}
      <Outline bookId={book.random_id} />
      <Pages bookId={book.random_id} />
      {writes && (
        <section class="card" aria-labelledby="delete-heading">
          <h2 id="delete-heading">Delete</h2>
          <p>Deleting removes the book, its pages and every file made from it, for good.</p>
          <Button variant="danger" onClick={() => setDeleting(true)}>Delete book</Button>
        </section>
      )}
      {deleting && (
        <Confirm
          title={`Delete “${book.name}”?`}
          confirmLabel="Delete for good"
          onClose={() => setDeleting(false)}
          onConfirm={async () => {
            const result = await call(client.DELETE('/v1/books/{book}', { params: { path: { book: book.random_id } } }));
            if (result.ok) {
              notify(`The book “${book.name}” was deleted.`);
              route('/app/books');
            }
            return result;
          }}
        >
          <p>
            The book, its {book.page_count} {book.page_count === 1 ? 'page' : 'pages'}, every image made from them, its public link
            and its embeds stop working at once. Readers' statistics of this book are no longer shown. This cannot be undone.
          </p>
        </Confirm>
      )}
    </Page>
  );
}

/** PUT /v1/books/{book} always carries the status; the rest only what changes. */
type Update = operations['updateBook']['requestBody']['content']['application/json'];

async function save(book: Book, body: Omit<Update, 'status'> & { status?: Update['status'] }) {
  return call(client.PUT('/v1/books/{book}', { params: { path: { book: book.random_id } }, body: { status: book.status as Update['status'], ...body } }));
}

function Details({ book, reload }: { book: Book; reload: () => Promise<void> }) {
  const current = (b: Book) => ({ title: b.name, description: b.description ?? '' });
  // What was typed, and what the book said when the typing started (`from`), so reading it again keeps only the person's changes.
  const stored = () => ({ ...current(book), from: current(book) });
  // The name and description are part of settings_revision: a draft restored after someone else's change meets the conflict.
  const draft = useDraft(draftKey('book-details', book.random_id), stored, { base: book.settings_revision, differs: (v) => v.title !== v.from.title || v.description !== v.from.description });
  const { title, description } = draft.value;
  const readAgain = async () => {
    const latest = await call(client.GET('/v1/books/{book}', { params: { path: { book: book.random_id } } }));
    if (!latest.ok) return setProblem(latest.problem);
    const theirs = current(latest.data);
    draft.set((v) => ({
      title: v.title !== v.from.title ? v.title : theirs.title,
      description: v.description !== v.from.description ? v.description : theirs.description,
      from: theirs,
    }));
    draft.rebase();
    setProblem(null);
    await reload();
  };
  const setTitle = (value: string) => draft.set((v) => ({ ...v, title: value }));
  const setDescription = (value: string) => draft.set((v) => ({ ...v, description: value }));
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  return (
    <form
      class="card stack"
      aria-labelledby="details-heading"
      onSubmit={async (event) => {
        event.preventDefault();
        setBusy(true);
        const result = await save(book, { title, description, settings_revision: draft.restoredBase ?? book.settings_revision });
        setBusy(false);
        setProblem(result.ok ? null : result.problem);
        if (result.ok) {
          draft.saved({ ...current(result.data), from: current(result.data) });
          notify('The name and description were saved.');
          await reload();
        }
      }}
    >
      <h2 id="details-heading">Name and description</h2>
      <DraftNotice restored={draft.restored} onDiscard={() => draft.discard(stored())} />
      <TextInput label="Name" value={title} onValue={setTitle} errors={fieldErrors(problem, 'title')} />
      <Field label="Description" errors={fieldErrors(problem, 'description')}>
        {(control) => <textarea {...control} value={description} onInput={(event) => setDescription(event.currentTarget.value)} />}
      </Field>
      {problem?.status === 409 ? (
        <div class="alert alert-error" role="alert">
          <p class="alert-title">Someone changed this book meanwhile</p>
          <p>Your name and description were not saved, and their change was not overwritten. Read the book again; what you typed stays in the form, and the next “Save” applies it.</p>
          <Button onClick={readAgain}>Read the book again</Button>
        </div>
      ) : (
        <ErrorMessage problem={problem} shownFields={['title', 'description']} title="The changes were not saved" />
      )}
      <Button type="submit" variant="primary" busy={busy}>Save</Button>
    </form>
  );
}

function Publishing({ book, reload }: { book: Book; reload: () => Promise<void> }) {
  const current = (b: Book) => ({ when: localInput(b.status === 'schedule' ? b.published_date : null), expiry: localInput(b.expires_at) });
  // What was typed, and what the book said when the typing started (`from`): like the name, kept until it is saved.
  const stored = () => ({ ...current(book), from: current(book) });
  const draft = useDraft(draftKey('book-publishing', book.random_id), stored, { differs: (v) => v.when !== v.from.when || v.expiry !== v.from.expiry });
  const { when, expiry } = draft.value;
  const setWhen = (value: string) => draft.set((v) => ({ ...v, when: value }));
  const setExpiry = (value: string) => draft.set((v) => ({ ...v, expiry: value }));
  const [busy, setBusy] = useState<string | null>(null);
  const [problem, setProblem] = useState<Problem | null>(null);
  const act = async (label: string, body: Parameters<typeof save>[1], done: string) => {
    setBusy(label);
    const result = await save(book, body);
    setBusy(null);
    setProblem(result.ok ? null : result.problem);
    if (result.ok) {
      // The field just saved shows the book's value; the other keeps what was typed into it and not saved yet.
      const theirs = current(result.data);
      const v = draft.value;
      const next = {
        when: 'published_date' in body || v.when === v.from.when ? theirs.when : v.when,
        expiry: 'expires_at' in body || v.expiry === v.from.expiry ? theirs.expiry : v.expiry,
        from: theirs,
      };
      if (next.when === theirs.when && next.expiry === theirs.expiry) draft.saved(next);
      else draft.set(next);
      notify(done);
      await reload();
    }
  };
  const status = bookStatus(book);
  return (
    <section class="card stack" aria-labelledby="publishing-heading">
      <h2 id="publishing-heading">Publishing</h2>
      <DraftNotice restored={draft.restored} what="dates" onDiscard={() => draft.discard(stored())} />
      <p>The book is <strong>{STATUS_WORDS[status].toLowerCase()}</strong>.{book.status === 'schedule' && ` It is published on ${formatDateTime(book.published_date)}.`}</p>
      <div class="actions">
        {book.status !== 'publish' && <Button variant="primary" busy={busy === 'publish'} onClick={() => act('publish', { status: 'publish' }, 'The book is published.')}>Publish</Button>}
        {book.status !== 'draft' && <Button busy={busy === 'draft'} onClick={() => act('draft', { status: 'draft' }, 'The book is unpublished: it is a draft again.')}>Unpublish</Button>}
      </div>
      <Field label="Publish on" hint={`Date and time in your time zone (${ZONE}).`} errors={fieldErrors(problem, 'published_date')}>
        {(control) => <input {...control} type="datetime-local" value={when} onInput={(event) => setWhen(event.currentTarget.value)} />}
      </Field>
      <Button busy={busy === 'schedule'} onClick={() => act('schedule', { status: 'schedule', published_date: fromLocal(when) }, `The book will be published on ${formatDateTime(fromLocal(when) ?? null)}.`)}>Schedule</Button>
      <Field label="Expires on" hint={`The book stops being public then (${ZONE}). Leave empty for never.`} errors={fieldErrors(problem, 'expires_at')}>
        {(control) => <input {...control} type="datetime-local" value={expiry} onInput={(event) => setExpiry(event.currentTarget.value)} />}
      </Field>
      <Button busy={busy === 'expiry'} onClick={() => act('expiry', { expires_at: fromLocal(expiry) }, expiry ? `The book expires on ${formatDateTime(fromLocal(expiry) ?? null)}.` : 'The expiry is unchanged.')}>Set expiry</Button>
      <ErrorMessage problem={problem} shownFields={['published_date', 'expires_at']} title="The book was not changed" />
    </section>
  );
}

function Outline({ bookId }: { bookId: string }) {
  const outline = useResource(() => call(client.GET('/v1/books/{book}/outline', { params: { path: { book: bookId } } })));
  const render = (entries: OutlineEntry[]) => (
    <ul>
      {entries.map((entry, i) => (
        <li key={i}>
          {entry.title}{entry.page ? <span class="muted"> (page {entry.page})</span> : null}
          {entry.children && entry.children.length > 0 && render(entry.children)}
        </li>
      ))}
    </ul>
  );
  return (
    <section class="card" aria-labelledby="outline-heading">
      <h2 id="outline-heading">Outline</h2>
      <ErrorMessage problem={outline.problem} title="The outline could not be read" />
      {outline.data && (outline.data.length === 0 ? <p class="empty">The document has no outline.</p> : render(outline.data as OutlineEntry[]))}
    </section>
  );
}

function Pages({ bookId }: { bookId: string }) {
  const pages = useResource(() => call(client.GET('/v1/books/{book}/pages', { params: { path: { book: bookId }, query: { limit: 200 } } })));
  return (
    <section class="card" aria-labelledby="pages-heading">
      <h2 id="pages-heading">Pages</h2>
      <ErrorMessage problem={pages.problem} title="The pages could not be read" />
      {pages.loading && !pages.data && <Loading what="the pages" />}
      {pages.data && (
        <ul class="page-list" aria-label="Pages">
          {pages.data.map((page) => (
            <li key={page.number}>
              <figure>
                {page.images[0] ? <img src={page.images[0].url} alt="" loading="lazy" width={page.images[0].width} height={page.images[0].height} /> : null}
                <figcaption>Page {page.number}</figcaption>
              </figure>
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}
