/**
 * Access in Chromium: an address added to the access list puts the book
 * behind the sign-in page (with the person's own message); a pasted list and
 * a CSV file are previewed with each row's error in words and imported; the
 * sign-in message typed survives a reload before it is saved; embed domains
 * are added and refused in words; an entry is removed by keyboard; "Anyone
 * with the link" lifts the list. A viewer sees the lists and no write
 * control. Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertAccessible, focusedElement, heading, tabTo, WEB_SKIP, webSuite } from './web-browser.ts';

describe('access in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Access' }, book: { name: 'Members' } });

  it('adds, imports and removes entries, keeps a typed message over a reload, puts the book behind sign-in, and lists embed domains', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/books/${suite.bookId}`, 'Members');
      await page.getByRole('link', { name: 'Access', exact: true }).click();
      await heading(page, 'Access: Members');
      assert.equal(await page.getByRole('radio', { name: 'Anyone with the link' }).isChecked(), true);
      await page.getByText('The access list is empty.').waitFor();
      await assertAccessible(page, 'Access, empty');

      // One address, after a refusal shown beside the field.
      const field = page.getByLabel('E-mail address or domain');
      await field.fill('ann@');
      await page.getByRole('button', { name: 'Add to access list' }).click();
      await page.getByRole('alert').filter({ hasText: 'The entry was not added' }).waitFor();
      assert.match(await page.locator('.field-errors').first().innerText(), /not a valid/);
      await field.fill('Ann@Example.com');
      await page.getByRole('button', { name: 'Add to access list' }).click();
      const list = page.getByRole('list', { name: 'Access list' });
      const listed = (entry: string) => list.locator('.item-title').getByText(entry, { exact: true });
      await listed('ann@example.com').waitFor();
      await page.getByRole('radio', { name: /^Only people on the access list/ }).waitFor();
      assert.equal(await page.getByRole('radio', { name: /^Only people on the access list/ }).isChecked(), true);

      // A pasted list: previewed row by row, errors in words, then imported.
      await page.getByLabel('Addresses and domains').fill('bob@example.com\nnot an address\npartner.org; bob@example.com\nann@example.com');
      await page.getByRole('button', { name: 'Preview import' }).click();
      const rows = page.getByRole('table', { name: 'Rows to import' });
      await rows.waitFor();
      await rows.getByRole('row').filter({ hasText: 'Line 2' }).filter({ hasText: 'Error: "not an address" is not a valid domain' }).waitFor();
      await rows.getByRole('row').filter({ hasText: 'Line 3' }).filter({ hasText: 'Repeated: Repeats row 1.' }).waitFor();
      await rows.getByRole('row').filter({ hasText: 'Line 4' }).filter({ hasText: 'Already on the list' }).waitFor();
      await page.getByText('2 will be added · 1 already on the list · 1 repeated · 1 with errors (not imported)').waitFor();
      await assertAccessible(page, 'Access, import preview');
      await page.getByRole('button', { name: 'Import 2 entries' }).click();
      await listed('partner.org').waitFor();
      await listed('bob@example.com').waitFor();

      // A CSV file with a header: rows numbered as a spreadsheet shows them.
      await page.getByLabel('Or a CSV file').setInputFiles({ name: 'readers.csv', mimeType: 'text/csv', buffer: Buffer.from('name,email\nCarol,carol@example.com\n"Dan, Jr.",dan@\n') });
      await page.getByText('2 values read from “readers.csv”.').waitFor();
      await page.getByRole('button', { name: 'Preview import' }).click();
      await rows.getByRole('row').filter({ hasText: 'Row 3' }).filter({ hasText: 'Error: "dan@" is not a valid' }).waitFor();
      await page.getByRole('button', { name: 'Import 1 entry' }).click();
      await listed('carol@example.com').waitFor();
      await page.getByText('4 entries', { exact: true }).waitFor();

      // The sign-in message typed is still there after a reload, until it is saved.
      const message = page.getByLabel('Message on the sign-in page');
      await message.fill('Members only: ask Ann for access.');
      await page.reload();
      await heading(page, 'Access: Members');
      await page.getByText('Your unsaved messages from before are back in the form.').waitFor();
      assert.equal(await page.getByLabel('Message on the sign-in page').inputValue(), 'Members only: ask Ann for access.');
      await page.getByRole('button', { name: 'Save messages' }).click();
      await page.getByText('The sign-in messages were saved.').waitFor();
      await page.reload();
      await heading(page, 'Access: Members');
      assert.equal(await page.getByText('Your unsaved messages from before are back in the form.').count(), 0);
      assert.equal(await page.getByLabel('Message on the sign-in page').inputValue(), 'Members only: ask Ann for access.');

      // Embed domains: a refusal in words, then a pasted address reduced to its host.
      await page.getByLabel('Website').fill('not a host');
      await page.getByRole('button', { name: 'Add embed domain' }).click();
      await page.getByRole('alert').filter({ hasText: 'The website was not added' }).waitFor();
      await page.getByLabel('Website').fill('https://Shop.Example.com/catalogue');
      await page.getByRole('button', { name: 'Add embed domain' }).click();
      await page.getByRole('list', { name: 'Embed domains' }).locator('.item-title').getByText('shop.example.com', { exact: true }).waitFor();
      await assertAccessible(page, 'Access, with lists');

      // Removing an entry by keyboard: the button, then the dialog's "Remove".
      await page.getByRole('button', { name: 'Remove ann@example.com' }).focus();
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Remove ann@example.com?' });
      await dialog.waitFor();
      await assertAccessible(page, 'Access, remove dialog');
      await dialog.getByRole('button', { name: 'Remove' }).focus();
      await page.keyboard.press('Enter');
      await dialog.waitFor({ state: 'detached' });
      await page.getByText('3 entries', { exact: true }).waitFor();
      assert.deepEqual(tab.problems, []);
    });

    // A reader now meets the sign-in page with the message.
    await suite.inTab(async (reader) => {
      const response = await reader.page.goto(`${suite.svc.origin}/read/${suite.bookId}`);
      assert.equal(response?.status(), 401);
      await reader.page.getByText('Members only: ask Ann for access.').waitFor();
      await reader.page.getByLabel('Your e-mail address').waitFor();
    });
  });

  it('shows a viewer the lists and no control that writes', async () => {
    await suite.signedIn('viewer@example.com', 'viewer', async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/books/${suite.bookId}/access`, 'Access: Members');
      await page.getByRole('list', { name: 'Access list' }).getByText('carol@example.com', { exact: true }).waitFor();
      await page.getByText('Access mode: Only people on the access list').waitFor();
      for (const name of ['Add to access list', 'Preview import', 'Save messages', 'Add embed domain', /^Remove/]) {
        assert.equal(await page.getByRole('button', { name }).count(), 0, String(name));
      }
      assert.equal(await page.getByRole('radio').count(), 0);
      await assertAccessible(page, 'Access, viewer');
    });
  });

  it('lifts the list with "Anyone with the link", after saying what is lost', async () => {
    await suite.signedIn('editor@example.com', null, async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/books/${suite.bookId}/access`, 'Access: Members');
      await page.getByRole('list', { name: 'Access list' }).waitFor();
      // The radio stays on the list until the dialog is answered.
      await page.getByRole('radio', { name: 'Anyone with the link' }).click();
      const dialog = page.getByRole('dialog', { name: 'Open the book to anyone with the link?' });
      await dialog.getByText('This removes all 3 entries of the access list.').waitFor();
      await dialog.getByRole('button', { name: 'Remove the access list' }).click();
      await page.getByText('The access list is empty.').waitFor();
      assert.equal(await page.getByRole('radio', { name: 'Anyone with the link' }).isChecked(), true);
      const response = await page.goto(`${suite.svc.origin}/read/${suite.bookId}`);
      assert.equal(response?.status(), 200);
    });
  });

  it('adds and removes an entry by keyboard alone', async () => {
    await suite.signedIn('editor@example.com', null, async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/books/${suite.bookId}/access`, 'Access: Members');
      await page.getByText('The access list is empty.').waitFor();
      await tabTo(page, /^input E-mail address or domain/, 60);
      await page.keyboard.type('kim@example.com');
      await page.keyboard.press('Enter');
      await page.getByRole('list', { name: 'Access list' }).locator('.item-title').getByText('kim@example.com', { exact: true }).waitFor();
      await page.locator('h1').focus();
      await tabTo(page, /^button Remove kim@example\.com/, 60);
      await page.keyboard.press('Enter');
      const dialog = page.getByRole('dialog', { name: 'Remove kim@example.com?' });
      await dialog.waitFor();
      // The dialog opens on its first control, "Remove".
      assert.match(await focusedElement(page), /^button Remove$/);
      await page.keyboard.press('Enter');
      await page.getByText('The access list is empty.').waitFor();
      assert.deepEqual(tab.problems, []);
    });
  });
});
