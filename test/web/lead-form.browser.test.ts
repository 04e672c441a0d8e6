/**
 * The lead form in Chromium: switched on with a title, fields and a page,
 * refused in words (a blank title, page 0), kept over a reload before it is
 * saved, saved, and then part of the reader's page; a viewer sees it and no
 * control that writes. Axe at 1280 and 360 px.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assertAccessible, heading, WEB_SKIP, webSuite } from './web-browser.ts';

describe('the lead form in the application', { skip: WEB_SKIP }, () => {
  const suite = webSuite({ workspace: { name: 'Leads' }, book: { name: 'Price list', pageCount: 4 } });

  it('sets up the form, shows refusals in words, keeps what was typed over a reload, and saves it for the reader', async () => {
    await suite.signedIn('editor@example.com', 'editor', async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/books/${suite.bookId}`, 'Price list');
      await page.getByRole('link', { name: 'Lead form' }).click();
      await heading(page, 'Lead form: Price list');
      await page.getByText('Never saved: this is the default form.').waitFor();
      assert.equal(await page.getByRole('checkbox', { name: 'Show the lead form in the reader' }).isChecked(), false);
      await assertAccessible(page, 'Lead form');

      await page.getByRole('checkbox', { name: 'Show the lead form in the reader' }).check();
      await page.getByLabel('Title').fill(' ');
      await page.getByLabel('Show after page').fill('0');
      await page.getByRole('button', { name: 'Save lead form' }).click();
      await page.getByRole('alert').filter({ hasText: 'The lead form was not saved' }).waitFor();
      await assertAccessible(page, 'Lead form, refused');

      await page.getByLabel('Title').fill('Get the full price list');
      await page.getByLabel('Description').fill('We send it today.');
      await page.getByLabel('Show after page').fill('2');
      await page.getByRole('checkbox', { name: 'Ask for: Company' }).check();
      await page.getByRole('checkbox', { name: 'Company required' }).check();
      await page.getByRole('checkbox', { name: 'Ask for: Name' }).uncheck();

      // Nothing typed is lost on a reload.
      await page.reload();
      await heading(page, 'Lead form: Price list');
      await page.getByText('Your unsaved changes from before are back in the form.').waitFor();
      assert.equal(await page.getByLabel('Title').inputValue(), 'Get the full price list');
      assert.equal(await page.getByRole('checkbox', { name: 'Company required' }).isChecked(), true);
      assert.equal(await page.getByRole('checkbox', { name: 'Ask for: Name' }).isChecked(), false);

      await page.getByRole('button', { name: 'Save lead form' }).click();
      await page.getByText('The lead form was saved: readers see it from now on.').waitFor();
      assert.equal(await page.getByText('Your unsaved changes from before are back in the form.').count(), 0);
      // The leads link answers the CSV to the signed-in person.
      const href = await page.getByRole('link', { name: 'Download the leads (CSV)' }).getAttribute('href');
      const csv = await page.request.get(`${suite.svc.origin}${href}`);
      assert.equal(csv.status(), 200);
      assert.match(csv.headers()['content-type'] ?? '', /text\/csv/);
      assert.match(await csv.text(), /^\uFEFF?id,submitted_at,name,email/);
      assert.deepEqual(tab.problems, []);
    });

    const saved = await suite.svc.request('GET', `/v1/books/${suite.bookId}/lead-form`, { key: suite.key });
    assert.deepEqual({ ...saved.body.data, updated_at: null }, {
      book_id: suite.bookId, enabled: true, title: 'Get the full price list', description: 'We send it today.', show_after_page: 2, updated_at: null,
      fields: [{ name: 'email', required: true }, { name: 'company', required: true }],
    });
    const reader = await fetch(`${suite.svc.origin}/read/${suite.bookId}`);
    assert.match(await reader.text(), /Get the full price list/);
  });

  it('shows a viewer the form and no control that writes', async () => {
    await suite.signedIn('viewer@example.com', 'viewer', async (tab) => {
      const { page } = tab;
      await suite.visit(page, `/app/books/${suite.bookId}/lead-form`, 'Lead form: Price list');
      await page.getByText('E-mail address (required), Company (required)').waitFor();
      assert.equal(await page.getByRole('button', { name: 'Save lead form' }).count(), 0);
      assert.equal(await page.getByRole('checkbox').count(), 0);
      await assertAccessible(page, 'Lead form, viewer');
    });
  });
});
