/** The screens' pure helpers: where sign-in returns to, and dates, waits and devices in words. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { safeNext } from '../../src/web/navigation.ts';
import { deviceName, waitInWords } from '../../src/web/format.ts';
import { rowsFromCsv, rowsFromText } from '../../src/web/share/access-import.ts';

describe('the screens\' helpers', () => {
  it('returns after sign-in only to the application\'s own addresses', () => {
    assert.equal(safeNext('/app/settings/members'), '/app/settings/members');
    assert.equal(safeNext('/app/settings/api-keys?x=1'), '/app/settings/api-keys?x=1');
    assert.equal(safeNext('/app'), '/app');
    for (const bad of [null, undefined, '', 'https://evil.example/app', '//evil.example/app', '/application', '/app/../v1/me', '/app\\..\\x', '/app/sign-in', '/app/sign-in/verify?token=x', '/v1/account']) {
      assert.equal(safeNext(bad), '/app', String(bad));
    }
  });

  it('says a wait in words', () => {
    assert.equal(waitInWords(1), '1 second');
    assert.equal(waitInWords(16), '16 seconds');
    assert.equal(waitInWords(60), '1 minute');
    assert.equal(waitInWords(1800), '30 minutes');
    assert.equal(waitInWords(3540), '59 minutes');
    assert.equal(waitInWords(3600), 'about 1 hour');
    assert.equal(waitInWords(7300), 'about 2 hours');
  });

  it('names a device from its user agent', () => {
    assert.equal(deviceName('Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/156.0.0.0 Safari/537.36'), 'Chrome on Linux');
    assert.equal(deviceName('Mozilla/5.0 (iPhone; CPU iPhone OS 17_0 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Mobile/15E148 Safari/604.1'), 'Safari on iOS');
    assert.equal(deviceName('Mozilla/5.0 (Windows NT 10.0; Win64; x64; rv:128.0) Gecko/20100101 Firefox/128.0'), 'Firefox on Windows');
    assert.equal(deviceName('Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/120.0 Safari/537.36 Edg/120.0'), 'Edge on Windows');
    assert.equal(deviceName('curl/8.5.0'), 'curl/8.5.0');
    assert.equal(deviceName(null), 'Unknown device');
  });
});

describe('reading a list to import into an access list', () => {
  it('takes one value a line (or separated by commas and semicolons), numbering lines', () => {
    assert.deepEqual(rowsFromText('ann@example.com\n\n bob@example.com ; example.org,\r\ncarol@example.com'), [
      { where: 'Line 1', value: 'ann@example.com' },
      { where: 'Line 3', value: 'bob@example.com' },
      { where: 'Line 3', value: 'example.org' },
      { where: 'Line 4', value: 'carol@example.com' },
    ]);
  });

  it('takes a CSV file\'s "email" column when the header names one, else its first column, with spreadsheet row numbers', () => {
    assert.deepEqual(rowsFromCsv('\uFEFFName,E-mail\n"Ann, Jr.",ann@example.com\nBob,\nCarol,carol@example.com\n'), [
      { where: 'Row 2', value: 'ann@example.com' },
      { where: 'Row 4', value: 'carol@example.com' },
    ]);
    assert.deepEqual(rowsFromCsv('ann@example.com,Ann\nexample.org\n'), [
      { where: 'Row 1', value: 'ann@example.com' },
      { where: 'Row 2', value: 'example.org' },
    ]);
    assert.deepEqual(rowsFromCsv(''), []);
  });
});
