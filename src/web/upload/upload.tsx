import { useRef, useState } from 'preact/hooks';
import { call, client, rank, role, type Problem } from '../api.ts';
import { Button, Hidden } from '../components/button.tsx';
import { ErrorMessage } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Page } from '../components/page.tsx';
import { bookHref, conversionWords, useBatch } from '../books/book-facts.ts';
import { sendDocument } from './send.ts';

type Phase = 'chosen' | 'sending' | 'converting' | 'done' | 'refused';

interface Item {
  key: number;
  file: File;
  phase: Phase;
  sent: number;
  total: number;
  batchId: string | null;
  /** Why it was refused: the upload's error envelope, or a failed conversion. */
  problem: Problem | null;
  abort?: () => void;
}

const ACCEPT = '.pdf,.docx,.doc,.odt,.xlsx,.xls,.ods,.pptx,.ppt,.odp,.jpg,.jpeg,.png';
const PASSWORD_CODES = new Set(['password_required', 'password_incorrect']);

let nextKey = 1;

function bytes(n: number): string {
  if (n < 1024) return `${n} bytes`;
  if (n < 1024 * 1024) return `${(n / 1024).toFixed(0)} KB`;
  return `${(n / 1024 / 1024).toFixed(1)} MB`;
}

/** Upload: several documents at once, each followed from its bytes to its pages. */
export default function Upload() {
  const [items, setItems] = useState<Item[]>([]);
  const [dragging, setDragging] = useState(false);
  const input = useRef<HTMLInputElement>(null);
  const writes = rank(role.value) >= rank('editor');

  const update = (key: number, change: Partial<Item>) => setItems((all) => all.map((item) => (item.key === key ? { ...item, ...change } : item)));

  const add = (files: FileList | null) => {
    if (!files?.length) return;
    const added = [...files].map((file): Item => ({ key: nextKey++, file, phase: 'chosen', sent: 0, total: file.size, batchId: null, problem: null }));
    setItems((all) => [...all, ...added]);
  };

  const send = (item: Item, password?: string) => {
    const sending = sendDocument(item.file, { original_filename: item.file.name, ...(password ? { password } : {}) }, (sent, total) => update(item.key, { sent, total }));
    update(item.key, { phase: 'sending', sent: 0, problem: null, batchId: null, abort: sending.abort });
    void sending.done.then((result) => {
      if (result.ok) update(item.key, { phase: 'converting', sent: item.file.size, batchId: result.data.id, abort: undefined });
      else update(item.key, { phase: 'refused', problem: result.problem, abort: undefined });
    });
  };

  const uploadAll = () => items.filter((item) => item.phase === 'chosen').forEach((item) => send(item));
  const waiting = items.some((item) => item.phase === 'chosen');

  if (!writes) {
    return (
      <Page title="Upload">
        <p>Viewers cannot upload documents. Ask an editor, an admin or an owner of the workspace.</p>
      </Page>
    );
  }

  return (
    <Page title="Upload">
      <p>Upload PDF, Word, Excel, PowerPoint or OpenDocument files, or JPEG and PNG images. Each becomes a book.</p>
      <div
        class={`drop-zone${dragging ? ' drop-zone-active' : ''}`}
        onDragOver={(event) => {
          event.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={(event) => {
          event.preventDefault();
          setDragging(false);
          add(event.dataTransfer?.files ?? null);
        }}
      >
        <label for="upload-files">Choose documents</label>
        <p class="hint" id="upload-files-hint">Or drop files here. You can choose several at once.</p>
        <input
          id="upload-files"
          ref={input}
          type="file"
          multiple
          accept={ACCEPT}
          aria-describedby="upload-files-hint"
          onChange={(event) => {
            add(event.currentTarget.files);
            event.currentTarget.value = '';
          }}
        />
      </div>
      {items.length > 0 && (
        <ul class="upload-list" aria-label="Documents">
          {items.map((item) => (
            <UploadRow key={item.key} item={item} onSend={(password) => send(item, password)} onUpdate={(change) => update(item.key, change)} onRemove={() => setItems((all) => all.filter((i) => i.key !== item.key))} />
          ))}
        </ul>
      )}
      <div class="actions">
        <Button variant="primary" onClick={uploadAll} aria-disabled={!waiting || undefined}>Upload</Button>
        {!waiting && items.length === 0 && <span class="hint">Choose documents first.</span>}
      </div>
    </Page>
  );
}

interface RowProps {
  item: Item;
  onSend: (password?: string) => void;
  onUpdate: (change: Partial<Item>) => void;
  onRemove: () => void;
}

function UploadRow({ item, onSend, onUpdate, onRemove }: RowProps) {
  const [password, setPassword] = useState('');
  const [cancelling, setCancelling] = useState(false);
  const [cancelProblem, setCancelProblem] = useState<Problem | null>(null);
  const { batch, problem: readProblem } = useBatch(item.phase === 'converting' ? item.batchId : null, (finished) => onUpdate({ phase: 'done', batchId: finished.id }));
  // The batch of this item's latest send (a password resends it as a new batch).
  const shown = (item.phase === 'converting' || item.phase === 'done') && batch?.id === item.batchId ? batch : null;
  const name = item.file.name;

  const cancel = async () => {
    if (item.phase === 'sending') return item.abort?.();
    if (!item.batchId) return;
    setCancelling(true);
    const result = await call(client.DELETE('/v1/batches/{batchId}', { params: { path: { batchId: item.batchId } } }));
    setCancelling(false);
    if (result.ok) onUpdate({ phase: 'done' });
    setCancelProblem(result.ok ? null : result.problem);
  };

  const needsPassword = shown?.status === 'failed' && PASSWORD_CODES.has(shown.error?.code ?? '');
  const book = shown?.books[0];

  return (
    <li class="upload-item">
      <h2 class="item-title">{name}</h2>
      <p class="item-meta">{bytes(item.file.size)}</p>
      {item.phase === 'chosen' && <p>Ready to upload.</p>}
      {item.phase === 'sending' && (
        <>
          <progress max={item.total || 1} value={item.sent} aria-label={`Sending ${name}`} />
          <p aria-live="polite">Sending: {bytes(item.sent)} of {bytes(item.total)}</p>
        </>
      )}
      {item.phase === 'refused' && item.problem?.type !== 'Aborted' && <ErrorMessage problem={item.problem} title={`${name} was not accepted`} />}
      {item.phase === 'refused' && item.problem?.type === 'Aborted' && <p>Cancelled.</p>}
      {shown && (
        <>
          {shown.status === 'processing' && shown.progress.total > 0 && <progress max={shown.progress.total} value={shown.progress.completed} aria-label={`Converting ${name}`} />}
          <p class={`conversion-state conversion-${shown.status}`} aria-live="polite">{conversionWords(shown)}</p>
          {shown.warnings.length > 0 && (
            <div class="warnings">
              <p class="alert-title">What could not be reproduced faithfully</p>
              <ul>{shown.warnings.map((w, i) => <li key={i}>{w.message}</li>)}</ul>
            </div>
          )}
          {shown.status === 'completed' && book && <p><a href={bookHref(book)}>Open the book {book.name}</a></p>}
        </>
      )}
      {item.phase === 'converting' && !shown && <p aria-live="polite">Sent. Waiting for the conversion…</p>}
      <ErrorMessage problem={readProblem} title="The conversion's progress could not be read" />
      <ErrorMessage problem={cancelProblem} title="The upload was not cancelled" />
      {needsPassword && (
        <form
          class="inline-form"
          onSubmit={async (event) => {
            event.preventDefault();
            // The refused conversion left a failed book: the new send makes the book, so that one goes.
            if (book) {
              const removed = await call(client.DELETE('/v1/books/{book}', { params: { path: { book: book.random_id } } }));
              if (!removed.ok && removed.problem.status !== 404) return setCancelProblem(removed.problem);
            }
            onSend(password);
          }}
        >
          <TextInput label={`Password of ${name}`} type="password" autoComplete="off" value={password} onValue={setPassword} />
          <Button type="submit">Convert with this password</Button>
        </form>
      )}
      <div class="actions">
        {(item.phase === 'sending' || item.phase === 'converting') && (
          <Button onClick={cancel} busy={cancelling}>Cancel<Hidden> {name}</Hidden></Button>
        )}
        {(item.phase === 'chosen' || item.phase === 'refused' || item.phase === 'done') && (
          <Button onClick={onRemove}>Remove<Hidden> {name} from this list</Hidden></Button>
        )}
      </div>
    </li>
  );
}
