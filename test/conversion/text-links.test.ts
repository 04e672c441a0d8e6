import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { PageLink, TextItem } from '../../src/modules/conversion/conversion.service.ts';
import { detectTextLinks, withoutOverlaps } from '../../src/modules/conversion/text-links.ts';

/** Items of 0.01 width per character on one line at y. */
function line(y: number, ...parts: [x: number, text: string][]): TextItem[] {
  return parts.map(([x, text]) => ({ text, x, y, width: text.length * 0.01, height: 0.02 }));
}

const urls = (links: PageLink[]) => links.map((l) => l.url);

describe('detectTextLinks', () => {
  it('finds http(s) and www. addresses and e-mail addresses', () => {
    const links = detectTextLinks([
      ...line(0.1, [0.1, 'See https://example.com/path?q=1 and www.flipbook.example.']),
      ...line(0.2, [0.1, 'Mail info@example.org, thanks.']),
    ]);
    assert.deepEqual(urls(links), ['https://example.com/path?q=1', 'https://www.flipbook.example/', 'mailto:info@example.org']);
    assert.ok(links.every((l) => l.source === 'text'));
  });

  it('places the rectangle over the matched characters', () => {
    const [link] = detectTextLinks(line(0.5, [0.1, 'Go to www.a.example now']));
    assert.ok(link);
    // "www.a.example" starts at character 6 and is 13 characters long.
    assert.deepEqual({ x: link.x, y: link.y, width: link.width, height: link.height }, { x: 0.16, y: 0.5, width: 0.13, height: 0.02 });
  });

  it('joins items of one line, so an address split by a font change is found whole', () => {
    const links = detectTextLinks(line(0.3, [0.1, 'Visit https://exam'], [0.28, 'ple.com/docs'], [0.45, 'today']));
    assert.deepEqual(urls(links), ['https://example.com/docs']);
    const link = links[0]!;
    assert.ok(Math.abs(link.x - 0.16) < 1e-9 && Math.abs(link.x + link.width - 0.4) < 1e-9, JSON.stringify(link));
  });

  it('does not join items on different lines or separated by a gap', () => {
    const links = detectTextLinks([...line(0.1, [0.1, 'https://example.com/a']), ...line(0.2, [0.1, 'b/c'])]);
    assert.deepEqual(urls(links), ['https://example.com/a']);
    const gap = detectTextLinks(line(0.1, [0.1, 'www.example.com'], [0.4, 'continues']));
    assert.deepEqual(urls(gap), ['https://www.example.com/']);
  });

  it('trims sentence punctuation and unbalanced brackets but keeps balanced ones', () => {
    const links = detectTextLinks([
      ...line(0.1, [0.1, '(see https://en.wikipedia.org/wiki/Foo_(bar)).']),
      ...line(0.2, [0.1, '"https://example.com/x", he said;']),
    ]);
    assert.deepEqual(urls(links), ['https://en.wikipedia.org/wiki/Foo_(bar)', 'https://example.com/x']);
  });

  it('ignores non-addresses and does not double-link an e-mail inside a URL', () => {
    assert.deepEqual(detectTextLinks(line(0.1, [0.1, 'www. is not a site, nor is http://localhost or v1.2.3'])), []);
    const links = detectTextLinks(line(0.1, [0.1, 'ftp://files.example.com and https://user@host.example.com/']));
    assert.deepEqual(urls(links), ['https://user@host.example.com/']);
  });

  it('withoutOverlaps drops auto-links over an existing link annotation', () => {
    const detected = detectTextLinks(line(0.1, [0.1, 'www.one.example www.two.example']));
    const existing: PageLink[] = [{ x: 0.1, y: 0.1, width: 0.15, height: 0.02, url: 'https://one.example/', source: 'annotation' }];
    assert.deepEqual(urls(withoutOverlaps(detected, existing)), ['https://www.two.example/']);
  });
});
