import { useId, useRef, useState } from 'preact/hooks';
import { useRoute } from 'preact-iso/router';
import { call, client, rank, role, type DataOf, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { draftKey, useDraft } from '../draft.ts';
import { notify } from '../components/toast.tsx';
import { formatDateTime } from '../format.ts';
import { useResource } from '../resource.ts';
import { bookHref, type Book } from '../books/book-facts.ts';
import { QrCode } from './qr-code.tsx';

type TrackedLink = DataOf<'/v1/books/{book}/tracked-links', 'get'>[number];
type Preset = 'responsive' | 'fixed' | 'full';

const PRESETS: { value: Preset; label: string }[] = [
  { value: 'responsive', label: 'Responsive (fills the width, height follows the reader)' },
  { value: 'fixed', label: 'Fixed size (800 × 600 px)' },
  { value: 'full', label: 'Full page' },
];

const attr = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;');

/** The embed code for a preset; responsive is the API's own `embed_code`. */
export function embedCodeFor(book: Book, preset: Preset): string {
  const src = attr(book.preview_url ?? '');
  const title = attr(book.name);
  if (preset === 'responsive' && book.embed_code) return book.embed_code;
  if (preset === 'full') return `<iframe src="${src}" title="${title}" allow="fullscreen" allowfullscreen style="position:fixed;inset:0;width:100%;height:100%;border:0"></iframe>`;
  return `<iframe src="${src}" title="${title}" width="800" height="600" loading="lazy" allow="fullscreen" allowfullscreen style="border:0;max-width:100%"></iframe>`;
}

/** Copies a value; without clipboard permission, selects it for the person to copy. */
function useCopy(select: () => void) {
  const [status, setStatus] = useState('');
  const copy = async (value: string, done: string) => {
    try {
      await navigator.clipboard.writeText(value);
      setStatus(done);
    } catch {
      select();
      setStatus('Selected: press Ctrl+C (or ⌘C) to copy.');
    }
  };
  return { status, copy };
}

/** Share and embed: the public link, the embed code with presets and a preview at phone and desktop widths, tracked links. */
export default function Share() {
  const { params } = useRoute();
  const bookId = params.bookId!;
  const book = useResource(() => call(client.GET('/v1/books/{book}', { params: { path: { book: bookId } } })));
  if (!book.data) {
    return (
      <Page title="Share and embed">
        {book.loading && <Loading what="the book" />}
        <ErrorMessage problem={book.problem} title="The book could not be read" />
      </Page>
    );
  }
  return <ShareScreen book={book.data} />;
}

function ShareScreen({ book }: { book: Book }) {
  const linkId = useId();
  const codeId = useId();
  const link = useRef<HTMLInputElement>(null);
  const code = useRef<HTMLTextAreaElement>(null);
  const linkCopy = useCopy(() => link.current?.select());
  const codeCopy = useCopy(() => code.current?.select());
  const [preset, setPreset] = useState<Preset>('responsive');
  const [width, setWidth] = useState<'phone' | 'desktop'>('desktop');
  const url = book.preview_url ?? '';
  const embed = embedCodeFor(book, preset);
  return (
    <Page title={`Share and embed: ${book.name}`}>
      <p><a href={bookHref(book)}>Back to the book</a> · <a href={`${bookHref(book)}/access`}>Access and embed domains</a> · <a href={`${bookHref(book)}/lead-form`}>Lead form</a></p>
      {book.status !== 'publish' && <p class="alert">The book is not published: the link and the embed show it once it is.</p>}
      <section class="card" aria-labelledby="link-heading">
        <h2 id="link-heading">Public link</h2>
        <div class="field copy-field">
          <label for={linkId}>Link to the book</label>
          <div class="copy-row">
            <input id={linkId} ref={link} type="text" readOnly value={url} spellcheck={false} onFocus={(event) => event.currentTarget.select()} />
            <Button onClick={() => linkCopy.copy(url, 'Link copied.')}>Copy link</Button>
          </div>
          <p class="hint" role="status">{linkCopy.status}</p>
        </div>
        {url && (
          <>
            <h3>QR code</h3>
            <QrCode url={url} bookName={book.name} />
          </>
        )}
      </section>
      <section class="card stack" aria-labelledby="embed" id="embed-section">
        <h2 id="embed">Embed</h2>
        <fieldset>
          <legend>Size</legend>
          {PRESETS.map((p) => (
            <label class="check" key={p.value}>
              <input type="radio" name="preset" checked={preset === p.value} onChange={() => setPreset(p.value)} />
              {p.label}
            </label>
          ))}
        </fieldset>
        <div class="field">
          <label for={codeId}>Embed code</label>
          <textarea id={codeId} ref={code} readOnly value={embed} rows={5} spellcheck={false} class="code" />
        </div>
        <Button onClick={() => codeCopy.copy(embed, 'Embed code copied.')}>Copy embed code</Button>
        <p class="hint" role="status">{codeCopy.status}</p>
        <fieldset>
          <legend>Preview width</legend>
          <label class="check"><input type="radio" name="width" checked={width === 'phone'} onChange={() => setWidth('phone')} />Phone (360 px)</label>
          <label class="check"><input type="radio" name="width" checked={width === 'desktop'} onChange={() => setWidth('desktop')} />Desktop (full width)</label>
        </fieldset>
        {book.status === 'publish' && url && <iframe class={`embed-preview embed-${width}`} src={url} title={`Embed preview (${width}): ${book.name}`} loading="lazy" />}
      </section>
      <TrackedLinks book={book} />
    </Page>
  );
}

function TrackedLinks({ book }: { book: Book }) {
  const writes = rank(role.value) >= rank('editor');
  const links = useResource(() => call(client.GET('/v1/books/{book}/tracked-links', { params: { path: { book: book.random_id }, query: { limit: 200 } } })));
  const draft = useDraft(draftKey('tracked-link', book.random_id), () => ({ name: '' }), { differs: (v) => v.name !== '' });
  const { name } = draft.value;
  const setName = (value: string) => draft.set({ name: value });
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const [copied, setCopied] = useState('');
  const create = async (event: Event) => {
    event.preventDefault();
    setBusy(true);
    const result = await call(client.POST('/v1/books/{book}/tracked-links', { params: { path: { book: book.random_id } }, body: { name } }));
    setBusy(false);
    setProblem(result.ok ? null : result.problem);
    if (result.ok) {
      draft.saved({ name: '' });
      notify(`The tracked link “${result.data.name}” was created.`);
      await links.reload();
    }
  };
  const copy = async (link: TrackedLink) => {
    try {
      await navigator.clipboard.writeText(link.url);
      setCopied(`Copied the link “${link.name}”.`);
    } catch {
      setCopied(`Copy it from the list: ${link.url}`);
    }
  };
  return (
    <section class="card" aria-labelledby="tracked-heading">
      <h2 id="tracked-heading">Tracked links</h2>
      <p>A tracked link opens the same book and counts its visits apart (one per newsletter, campaign or site).</p>
      <ErrorMessage problem={links.problem} title="The tracked links could not be read" />
      {links.data?.length === 0 && <p class="empty">No tracked links yet.</p>}
      {links.data && links.data.length > 0 && (
        <ul class="item-list" aria-label="Tracked links">
          {links.data.map((link: TrackedLink) => (
            <li key={link.id} class="item">
              <div>
                <h3 class="item-title">{link.name}</h3>
                <p class="item-meta"><code>{link.url}</code></p>
                <p class="item-meta">{link.visits} {link.visits === 1 ? 'visit' : 'visits'} · created {formatDateTime(link.created_at)}</p>
              </div>
              <Button onClick={() => copy(link)}>Copy<Hidden> the link {link.name}</Hidden></Button>
            </li>
          ))}
        </ul>
      )}
      <p class="hint" role="status">{copied}</p>
      {writes && (
        <form class="stack" onSubmit={create}>
          <TextInput label="Name of the new link" hint="What it is for, e.g. “March newsletter”." value={name} onValue={setName} errors={fieldErrors(problem, 'name')} />
          <ErrorMessage problem={problem} shownFields={['name']} title="The link was not created" />
          <Button type="submit" busy={busy}>Create tracked link</Button>
        </form>
      )}
    </section>
  );
}
