/** The sentences the analytics screens give for their charts (src/web/analytics/range.ts), read by screen readers in place of the bars. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { dropOffSummary, eventLabel, flowSummary, rangeHref, reachOf, readRange } from '../../src/web/analytics/range.ts';

describe('analytics screen sentences', () => {
  it('the address keeps the range, the switch and a tracked link; anything else in link is ignored', () => {
    const state = readRange({ range: '7d', team: 'exclude', link: '12' });
    assert.deepEqual(state, { date: '7d', excludeTeam: true, link: 12 });
    assert.equal(rangeHref('/app/analytics/books/b1', state), '/app/analytics/books/b1?range=7d&team=exclude&link=12');
    assert.deepEqual(readRange({ range: '30d', link: '0' }), { date: '30d', excludeTeam: false });
    assert.deepEqual(readRange({ link: '12abc' }).link, undefined);
    assert.deepEqual(readRange({ link: '99999999999' }).link, undefined);
    assert.equal(rangeHref('/app/analytics', { date: '90d', excludeTeam: false }), '/app/analytics?range=90d');
  });

  it('the address keeps the events filters; a type of the other list, a page of the audit log or page 0 are ignored', () => {
    const state = readRange({ range: '7d', event_type: 'link_clicked', event_page: '3' });
    assert.deepEqual(state, { date: '7d', excludeTeam: false, events: { kind: 'interaction', type: 'link_clicked', page: 3 } });
    assert.equal(rangeHref('/app/analytics/books/b1', state), '/app/analytics/books/b1?range=7d&event_type=link_clicked&event_page=3');
    const audit = readRange({ events: 'audit', event_type: 'access_rejected', event_page: '3' });
    assert.deepEqual(audit.events, { kind: 'audit', type: 'access_rejected' });
    assert.equal(rangeHref('/b', audit), '/b?range=30d&events=audit&event_type=access_rejected');
    assert.deepEqual(readRange({ events: 'audit' }).events, { kind: 'audit' });
    assert.equal(readRange({ event_type: 'access_rejected' }).events, undefined);
    assert.equal(readRange({ event_page: '0' }).events, undefined);
    assert.equal(readRange({ events: 'other', event_page: '1x' }).events, undefined);
    // Changing the range keeps them.
    assert.equal(rangeHref('/b', { ...state, date: '30d' }), '/b?range=30d&event_type=link_clicked&event_page=3');
  });

  it('reach: whole per cent, 0 without visits', () => {
    assert.equal(reachOf(1, 3), 33);
    assert.equal(reachOf(2, 3), 67);
    assert.equal(reachOf(5, 0), 0);
  });

  it('drop-off: the ends and the largest fall between neighbouring pages', () => {
    assert.equal(dropOffSummary([]), 'No page was read in this range.');
    assert.equal(dropOffSummary([{ page: 1, reach: 100 }]), 'Page 1 is reached by 100 %; no page loses readers to the next.');
    assert.equal(
      dropOffSummary([{ page: 1, reach: 100 }, { page: 2, reach: 90 }, { page: 3, reach: 40 }, { page: 4, reach: 45 }]),
      'Page 1 is reached by 100 %, the last page (4) by 45 %; the largest drop is after page 2 (90 % to 40 %).',
    );
    // A tie keeps the first fall.
    assert.match(dropOffSummary([{ page: 1, reach: 100 }, { page: 2, reach: 50 }, { page: 3, reach: 0 }]), /after page 1 \(100 % to 50 %\)/);
  });

  it('flow: visits, most entries and exits, the most common move', () => {
    assert.equal(flowSummary(0, { pages: [], transitions: [] }), 'No visit in this range.');
    const pages = [{ page_number: 1, views: 3, entries: 2, exits: 0 }, { page_number: 2, views: 2, entries: 1, exits: 3 }];
    assert.equal(
      flowSummary(3, { pages, transitions: [{ from_page: 1, to_page: 2, count: 2, readers: 1 }] }),
      '3 visits; most began on page 1 (2); most left from page 2 (3); the most common move is page 1 to page 2 (2 times, by 1 reader).',
    );
    assert.equal(
      flowSummary(1, { pages: [{ page_number: 1, views: 1, entries: 1, exits: 1 }], transitions: [] }),
      '1 visit; most began on page 1 (1); most left from page 1 (1); no reader moved between pages.',
    );
  });

  it('event types in words', () => {
    assert.equal(eventLabel('page_segment_completed'), 'Page segment completed');
    assert.equal(eventLabel('access_rejected'), 'Access rejected');
  });
});
