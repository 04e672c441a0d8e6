/**
 * Settings → Profile and Sessions in Chromium: a passkey registered through
 * Chromium's virtual authenticator signs in after signing out; the name is
 * saved; sessions list this device, one ends another, "Sign out everywhere"
 * ends all; with passwords on, a password is set and signs in. Every screen
 * passes axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Page } from 'playwright-core';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

async function openProfile(page: Page) {
  await page.getByRole('link', { name: 'Profile' }).click();
  await heading(page, 'Profile');
  await page.getByRole('heading', { name: 'Passkeys' }).waitFor();
}

describe('profile, passkeys and sessions in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Acme Publishing' }, env: { AUTH_PASSWORDS: true } });

  it('registers a passkey with the virtual authenticator, signs out, and signs in with it', async () => {
    await suite.signedIn('pat@example.com', 'editor', async (tab) => {
      const { page, context } = tab;
      const cdp = await context.newCDPSession(page);
      await cdp.send('WebAuthn.enable');
      await cdp.send('WebAuthn.addVirtualAuthenticator', {
        options: { protocol: 'ctap2', transport: 'internal', hasResidentKey: true, hasUserVerification: true, isUserVerified: true },
      });
      await openProfile(page);
      await page.getByText('You have no passkeys yet.').waitFor();
      await assertAccessible(page, 'profile');

      // The name, saved; the e-mail shown.
      await page.getByLabel('Name', { exact: true }).fill('Pat Doe');
      await page.getByRole('button', { name: 'Save name' }).click();
      await page.getByRole('status').filter({ hasText: 'Your name was saved.' }).waitFor();
      assert.match(await page.getByRole('main').textContent() ?? '', /pat@example\.com/);

      await page.getByLabel('Passkey name').fill('Test laptop');
      await page.getByRole('button', { name: 'Add a passkey' }).click();
      const list = page.getByRole('list', { name: 'Your passkeys' });
      await list.getByText('Test laptop', { exact: true }).waitFor();
      assert.equal(await page.getByLabel('Passkey name').inputValue(), '', 'the form is ready for another');
      await assertAccessible(page, 'profile with a passkey');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await heading(page, 'Sign in to Flipbook');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      await heading(page, 'Home');
      assert.match(await page.getByRole('main').textContent() ?? '', /Welcome, Pat Doe/);

      // Removed, it no longer signs in.
      await openProfile(page);
      await page.getByRole('button', { name: 'Remove passkey Test laptop' }).click();
      await page.getByText('You have no passkeys yet.').waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await heading(page, 'Sign in to Flipbook');
      await page.getByRole('button', { name: 'Sign in with a passkey' }).click();
      const refused = page.getByRole('alert').filter({ hasText: 'You were not signed in' });
      await refused.waitFor();
      assert.ok(((await refused.textContent()) ?? '').length > 'You were not signed in'.length, 'says why');
      await assertAccessible(page, 'passkey refused');
      assert.deepEqual(tab.problems, []);
    });
  });

  it('sets a password and signs in with it, when passwords are on', async () => {
    await suite.signedIn('pw@example.com', 'viewer', async (tab) => {
      const { page } = tab;
      await openProfile(page);
      await page.getByLabel('New password').fill('correct horse battery staple');
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('status').filter({ hasText: 'Your password was set.' }).waitFor();
      await page.getByRole('button', { name: 'Change password' }).waitFor();
      await page.getByRole('button', { name: 'Sign out' }).click();
      await heading(page, 'Sign in to Flipbook');

      await page.getByLabel('E-mail address').fill('pw@example.com');
      await page.getByLabel('Password', { exact: true }).fill('wrong password');
      await page.getByRole('button', { name: 'Sign in with password' }).click();
      await page.getByRole('alert').filter({ hasText: 'You were not signed in' }).waitFor();
      assert.equal(await page.getByLabel('E-mail address').inputValue(), 'pw@example.com', 'what was typed stays');
      await assertAccessible(page, 'wrong password');
      await page.getByLabel('Password', { exact: true }).fill('correct horse battery staple');
      await page.getByRole('button', { name: 'Sign in with password' }).click();
      await heading(page, 'Home');
      assert.deepEqual(tab.problems, []);
    });
  });

  it('lists sessions with this device, ends another one, then every one', async () => {
    await suite.signedIn('ses@example.com', 'viewer', (phone) => suite.signedIn('ses@example.com', null, async (laptop) => {
      const { page } = laptop;
      await page.getByRole('link', { name: 'Sessions' }).click();
      await heading(page, 'Sessions');
      const rows = page.getByRole('table').getByRole('row');
      await page.getByRole('table').getByText('This device', { exact: true }).waitFor();
      assert.equal(await rows.count(), 3, 'a header and two sessions');
      await assertAccessible(page, 'sessions');

      // End the other one: the phone is signed out at its next call.
      const other = page.getByRole('button', { name: /^Sign out of (?!this device)/ });
      assert.equal(await other.count(), 1);
      await other.click();
      await page.getByRole('status').filter({ hasText: /^Signed out of / }).waitFor();
      await page.waitForFunction(() => document.querySelectorAll('table tbody tr').length === 1);
      await phone.page.getByRole('link', { name: 'Sessions' }).click();
      await heading(phone.page, 'Sign in to Flipbook');

      await page.getByRole('button', { name: 'Sign out everywhere' }).click();
      const dialog = page.getByRole('dialog', { name: 'Sign out everywhere?' });
      await dialog.waitFor();
      await assertAccessible(page, 'sign out everywhere dialog');
      await dialog.getByRole('button', { name: 'Sign out everywhere' }).click();
      await heading(page, 'Sign in to Flipbook');
      assert.equal(await page.evaluate(async () => (await fetch('/v1/account')).status), 401);
      assert.deepEqual([...phone.problems, ...laptop.problems], []);
    }));
  });
});
