import { useState } from 'preact/hooks';
import { account, call, client, type Problem } from '../api.ts';
import { Button } from '../components/button.tsx';
import { ErrorMessage, fieldErrors } from '../components/error-message.tsx';
import { TextInput } from '../components/field.tsx';
import { notify } from '../components/toast.tsx';

/** Sets or changes the account's password (only shown when the service has passwords on). */
export function PasswordForm({ hasPassword }: { hasPassword: boolean }) {
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [problem, setProblem] = useState<Problem | null>(null);
  const submit = async (event: Event) => {
    event.preventDefault();
    if (busy) return;
    setBusy(true);
    const result = await call(client.PUT('/v1/account/password', { body: { password } }));
    setBusy(false);
    if (!result.ok) return setProblem(result.problem);
    setProblem(null);
    setPassword('');
    if (account.value) account.value = { ...account.value, user: { ...account.value.user, has_password: true } };
    notify(hasPassword ? 'Your password was changed.' : 'Your password was set.');
  };
  return (
    <section class="card" aria-labelledby="password">
      <h2 id="password">Password</h2>
      <p>{hasPassword ? 'You can sign in with your e-mail address and password.' : 'You have no password yet. Set one to sign in with your e-mail address and password.'}</p>
      <form class="stack" onSubmit={submit} noValidate>
        <TextInput label="New password" type="password" name="new-password" autoComplete="new-password" value={password} onValue={setPassword} errors={fieldErrors(problem, 'password')} />
        <ErrorMessage problem={problem} shownFields={['password']} title="The password was not saved" />
        <Button type="submit" variant="primary" busy={busy}>{hasPassword ? 'Change password' : 'Set password'}</Button>
      </form>
    </section>
  );
}
