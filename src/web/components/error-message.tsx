import type { Problem } from '../api.ts';
import { waitInWords } from '../format.ts';

interface ErrorMessageProps {
  problem: Problem | null;
  /** Fields whose messages the form shows beside the field itself (not repeated here). */
  shownFields?: readonly string[];
  /** What was being done, as a heading of the message ("The invitation was not sent"). */
  title?: string;
}

/**
 * An API error in words: the envelope's message, every detail that the form
 * does not show beside its field, and for a 429 how long to wait.
 */
export function ErrorMessage({ problem, shownFields = [], title }: ErrorMessageProps) {
  if (!problem) return null;
  const details = Object.entries(problem.details).filter(([field]) => !shownFields.includes(field));
  return (
    <div class="alert alert-error" role="alert">
      {title && <p class="alert-title">{title}</p>}
      <p>{problem.message}</p>
      {details.length > 0 && (
        <ul>
          {details.flatMap(([field, messages]) => messages.map((message) => <li key={`${field}:${message}`}>{message}</li>))}
        </ul>
      )}
      {problem.retryAfterSeconds !== null && <p>You can try again in {waitInWords(problem.retryAfterSeconds)}.</p>}
    </div>
  );
}

/** The messages for one field of a problem, for a Field's `errors`. */
export function fieldErrors(problem: Problem | null, field: string): string[] | undefined {
  return problem?.details[field];
}
