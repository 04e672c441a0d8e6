import { useEffect, useRef, useState } from 'preact/hooks';
import { call, client, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';

const NEXT_KEY = 'flipbook.sign-in.next';

/** The link opens in a new tab: where the visit was headed waits in this browser's storage for it. */
function rememberNext(next: string | undefined): void {
  try {
    if (next && next !== '/app') localStorage.setItem(NEXT_KEY, JSON.stringify({ next, at: Date.now() }));
    else localStorage.removeItem(NEXT_KEY);
  } catch {
    // storage refused: the link leads home
  }
}

/** Where the visit that asked for the link was headed (within the hour), once. */
export function takeRememberedNext(): string | undefined {
  try {
    const saved = JSON.parse(localStorage.getItem(NEXT_KEY) ?? 'null') as { next?: unknown; at?: unknown } | null;
    localStorage.removeItem(NEXT_KEY);
    return saved && typeof saved.next === 'string' && typeof saved.at === 'number' && Date.now() - saved.at < 3_600_000 ? saved.next : undefined;
  } catch {
    return undefined;
  }
}

interface LinkFormProps {
  email: string;
  onEmail: (email: string) => void;
  submitLabel?: string;
  /** Where to go once the link is used (an /app address), remembered in this browser. */
  next?: string;
}

/**
 * "E-mail address" and "Send sign-in link", then "Check your e-mail": the
 * same answer whether or not the address has an account.
 */
export function LinkForm({ email, onEmail, submitLabel = 'Send sign-in link', next }: LinkFormProps) {
  const [sentTo, setSentTo] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const result = await call(client.POST('/v1/auth/sign-in-links', { body: { email: email.trim() } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    rememberNext(next);
    setSentTo(email.trim());
  };
  if (sentTo) return <CheckEmail address={sentTo} onAgain={() => setSentTo(null)} />;
  return (
    <form class="stack" onSubmit={submit} noValidate>
      <TextInput label="E-mail address" type="email" name="email" autoComplete="username webauthn" required value={email} onValue={onEmail} errors={fieldErrors(problem, 'email')} />
      <ErrorMessage problem={problem} shownFields={['email']} title="No link was sent" />
      <Button type="submit" variant="primary" busy={busy}>{submitLabel}</Button>
    </form>
  );
}

function CheckEmail({ address, onAgain }: { address: string; onAgain: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), []);
  return (
    <div class="sent">
      <h3 ref={heading} tabIndex={-1}>Check your e-mail</h3>
      <p>
        If <strong>{address}</strong> can sign in to Flipbook, a sign-in link is on its way there. The link works once, for a short time.
      </p>
      <Button variant="link" onClick={onAgain}>Use another address or send again</Button>
    </div>
  );
}
