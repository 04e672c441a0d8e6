import type { Book } from './book-facts.ts';
import { conversionWords, useBatch } from './book-facts.ts';

/**
 * A book's conversion in words: "Ready" from the book itself; while it
 * converts, or when it failed, the batch says how far it got or why.
 */
export function Conversion({ book, onFinished }: { book: Book; onFinished?: () => void }) {
  const follows = book.page_images_status !== 'ready' && book.batch_id ? book.batch_id : null;
  const { batch, problem } = useBatch(follows, onFinished);
  if (!follows) return <span>Ready</span>;
  if (!batch) return <span>{problem ? `Conversion unknown: ${problem.message}` : book.page_images_status === 'failed' ? 'Failed' : 'Converting'}</span>;
  const { total, completed } = batch.progress;
  return (
    <span class="conversion">
      <span>{conversionWords(batch)}</span>
      {batch.status === 'processing' && total > 0 && <progress max={total} value={completed} aria-label={`Conversion of ${book.name}`} />}
      {batch.warnings.length > 0 && <span class="warning-count"> ({batch.warnings.length} {batch.warnings.length === 1 ? 'warning' : 'warnings'})</span>}
    </span>
  );
}
