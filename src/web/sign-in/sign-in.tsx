import { startAuthentication } from '@simplewebauthn/browser';
import { useEffect, useState } from 'preact/hooks';
import { useLocation } from 'preact-iso/router';
import { account, call, client, signedIn, type Problem } from '../api.ts';
import { safeNext } from '../navigation.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { Page } from '../components/page.tsx';
import { useResource } from '../resource.ts';
import { LinkForm } from './link-form.tsx';
import { passkeyProblem } from './passkey-errors.ts';

/** Sign-in: a link by e-mail, a passkey, or (when the service allows it) a password. */
export default function SignIn() {
  const { query, route } = useLocation();
  const next = safeNext(query.next);
  const methods = useResource(() => call(client.GET('/v1/auth/methods')));
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState<'passkey' | 'password' | null>(null);
  const [passkeyError, setPasskeyError] = useState<Problem | null>(null);
  const [passwordError, setPasswordError] = useState<Problem | null>(null);

  useEffect(() => {
    if (account.value) route(next, true);
  }, [account.value]);

  const done = (data: NonNullable<typeof account.value>) => {
    signedIn(data);
    route(next, true);
  };

  const withPasskey = async () => {
    if (busy) return;
    setBusy('passkey');
    setPasskeyError(null);
    try {
      const options = await call(client.POST('/v1/auth/passkeys/options'));
      if (!options.ok) return setPasskeyError(options.problem);
      let response;
      try {
        response = await startAuthentication({ optionsJSON: options.data.options as never });
      } catch (error) {
        return setPasskeyError(passkeyProblem(error, 'sign-in'));
      }
      const verified = await call(client.POST('/v1/auth/passkeys/verify', { body: { challenge_id: options.data.challenge_id, response: response as never } }));
      if (!verified.ok) return setPasskeyError(verified.problem);
      done(verified.data);
    } finally {
      setBusy(null);
    }
  };

  const withPassword = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy('password');
    const result = await call(client.POST('/v1/auth/password', { body: { email: email.trim(), password } }));
    setBusy(null);
    if (!result.ok) return setPasswordError(result.problem);
    done(result.data);
  };

  return (
    <Page title="Sign in to Flipbook">
      <section class="card" aria-labelledby="by-link">
        <h2 id="by-link">With a link by e-mail</h2>
        <LinkForm email={email} onEmail={setEmail} next={next} />
      </section>
      {methods.data?.passkey && (
        <section class="card" aria-labelledby="by-passkey">
          <h2 id="by-passkey">With a passkey</h2>
          <p>Use a passkey saved on this device or on your phone. You add passkeys in your profile once signed in.</p>
          <ErrorMessage problem={passkeyError} title="You were not signed in" />
          <Button variant="secondary" onClick={withPasskey} busy={busy === 'passkey'}>Sign in with a passkey</Button>
        </section>
      )}
      {methods.data?.password && (
        <section class="card" aria-labelledby="by-password">
          <h2 id="by-password">With a password</h2>
          <form class="stack" onSubmit={withPassword} noValidate>
            <p class="hint">Uses the e-mail address above.</p>
            <TextInput label="Password" type="password" name="password" autoComplete="current-password" value={password} onValue={setPassword} errors={fieldErrors(passwordError, 'password')} />
            <ErrorMessage problem={passwordError} shownFields={['password']} title="You were not signed in" />
            <Button type="submit" variant="secondary" busy={busy === 'password'}>Sign in with password</Button>
          </form>
        </section>
      )}
      <ErrorMessage problem={methods.problem} title="The sign-in methods could not be read" />
    </Page>
  );
}
