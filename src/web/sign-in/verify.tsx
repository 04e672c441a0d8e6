import { useEffect, useRef, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { call, client, signedIn, type Problem } from '../api.ts';
import { safeNext } from '../navigation.ts';
import { ErrorMessage } from '../components/error-message.tsx';
import { Loading } from '../components/loading.tsx';
import { Page } from '../components/page.tsx';
import { LinkForm, takeRememberedNext } from './link-form.tsx';

/** The link from the sign-in e-mail: exchanges its token for a session and goes home, or says why not. */
export default function VerifyLink() {
  const { query, route } = useLocation();
  const token = query.token ?? '';
  const [problem, setProblem] = useState<Problem | null>(null);
  const [email, setEmail] = useState('');
  const started = useRef(false);
  useEffect(() => {
    // A link works once: exchange it once, whatever renders again.
    if (started.current || !token) return;
    started.current = true;
    void call(client.POST('/v1/auth/sign-in-links/verify', { body: { token } })).then((result) => {
      if (!result.ok) return setProblem(result.problem);
      signedIn(result.data);
      route(safeNext(takeRememberedNext()), true);
    });
  }, [token]);
  if (token && !problem) {
    return (
      <Page title="Signing you in">
        <Loading what="your account" />
      </Page>
    );
  }
  return (
    <Page title="This sign-in link did not work">
      {problem ? <ErrorMessage problem={problem} /> : <p class="alert alert-error" role="alert">This address has no sign-in token: open the link from the e-mail as it is.</p>}
      <section class="card" aria-labelledby="new-link">
        <h2 id="new-link">Get a new link</h2>
        <LinkForm email={email} onEmail={setEmail} submitLabel="Send a new link" />
      </section>
      <p><a href="/app/sign-in">Other ways to sign in</a></p>
    </Page>
  );
}
