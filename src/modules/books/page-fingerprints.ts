/**
 * Pages across versions (issue 29, docs/book-versions.md): when a version's
 * conversion is done, each of its pages is fingerprinted (normalised text
 * hash + 8×8 average hash of the 320 px image) and matched to a page of the
 * version current then, so page figures can follow an unchanged page when a
 * page is inserted or removed before it. Matching never blocks a version: a
 * failure is logged and the version simply has no matches.
 */
import { createHash } from 'node:crypto';
import { and, eq, sql } from 'drizzle-orm';
import sharp from 'sharp';
import type { DbOrTx } from '../../platform/db/database.ts';
import type { Storage } from '../../platform/storage/storage.ts';
import { bookPageFingerprints, type StoredPageImage } from './books.tables.ts';

export interface PageFingerprint {
  pageNumber: number;
  textHash: string;
  imageHash: string;
}

/** Most bits of 64 two images of the same page may differ by (re-rendering, compression) when their texts are equal. */
const IMAGE_BITS_WITH_TEXT = 10;
/** For pages without text, the image alone decides: closer. */
const IMAGE_BITS_WITHOUT_TEXT = 4;

export function textHash(text: string): string {
  const normalised = text.normalize('NFKC').toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
  return normalised ? createHash('sha256').update(normalised).digest('hex').slice(0, 16) : '';
}

/** The 8×8 average hash: 64 bits, each 1 where the grey cell is brighter than the mean. */
export async function averageHash(image: Buffer): Promise<string> {
  const cells = await sharp(image).greyscale().resize(8, 8, { fit: 'fill' }).raw().toBuffer();
  const mean = cells.reduce((n, v) => n + v, 0) / cells.length;
  let bits = 0n;
  for (let i = 0; i < 64; i++) bits = (bits << 1n) | (cells[i]! > mean ? 1n : 0n);
  return bits.toString(16).padStart(16, '0');
}

const hamming = (a: string, b: string) => {
  let x = BigInt(`0x${a}`) ^ BigInt(`0x${b}`);
  let n = 0;
  while (x) {
    n += Number(x & 1n);
    x >>= 1n;
  }
  return n;
};

/**
 * Each new page → the old page it is, or nothing. A page matches an old page
 * with the same text and a near image (or, both without text, a nearer
 * image); among several, the nearest image, then the nearest position
 * relative to the previous match. Each old page is taken once.
 */
export function matchPages(fresh: PageFingerprint[], old: PageFingerprint[]): Map<number, number> {
  const taken = new Set<number>();
  const matches = new Map<number, number>();
  let shift = 0; // the last match's offset (old - new): an insertion before moves the pages after it by one
  for (const page of fresh) {
    let best: { page: number; score: [number, number] } | null = null;
    for (const candidate of old) {
      if (taken.has(candidate.pageNumber) || !page.imageHash || !candidate.imageHash || page.textHash !== candidate.textHash) continue;
      const bits = hamming(page.imageHash, candidate.imageHash);
      if (bits > (page.textHash ? IMAGE_BITS_WITH_TEXT : IMAGE_BITS_WITHOUT_TEXT)) continue;
      const score: [number, number] = [bits, Math.abs(candidate.pageNumber - (page.pageNumber + shift))];
      if (!best || score[0] < best.score[0] || (score[0] === best.score[0] && score[1] < best.score[1])) best = { page: candidate.pageNumber, score };
    }
    if (best) {
      taken.add(best.page);
      matches.set(page.pageNumber, best.page);
      shift = best.page - page.pageNumber;
    }
  }
  return matches;
}

interface StoredPage {
  number: number;
  plain_text: string;
  images: StoredPageImage[];
}

/** Fingerprints of pages as stored (book_pages or book_version_pages rows): the smallest image listed that the conversion made. */
export async function fingerprintPages(storage: Storage, pages: StoredPage[]): Promise<PageFingerprint[]> {
  const out: PageFingerprint[] = [];
  for (const page of pages) {
    const image = page.images.filter((i) => !i.onDemand).sort((a, b) => a.width - b.width)[0];
    let imageHash = '';
    if (image) {
      const object = await storage.get(image.key);
      if (object) {
        const chunks: Buffer[] = [];
        for await (const chunk of object.body) chunks.push(chunk as Buffer);
        imageHash = await averageHash(Buffer.concat(chunks)).catch(() => '');
      }
    }
    out.push({ pageNumber: page.number, textHash: textHash(page.plain_text), imageHash });
  }
  return out;
}

const rows = (result: unknown) => ((result as { rows?: unknown[] }).rows ?? (result as unknown[])) as StoredPage[];

/**
 * Fingerprints the new version (its pages in book_version_pages) and matches
 * it against the version current now (its pages in book_pages), whose
 * fingerprints are taken first if it has none yet (version 1 of a book, or
 * one made before this existed).
 */
export async function fingerprintVersion(db: DbOrTx, storage: Storage, input: { bookId: number; versionId: number; version: number; currentVersion: number }): Promise<number> {
  const current = await db.select().from(bookPageFingerprints).where(and(eq(bookPageFingerprints.bookId, input.bookId), eq(bookPageFingerprints.version, input.currentVersion)));
  let old: PageFingerprint[] = current;
  if (current.length === 0) {
    old = await fingerprintPages(storage, rows(await db.execute(sql`select number, plain_text, images from book_pages where book_id = ${input.bookId} order by number`)));
    if (old.length > 0) {
      await db.insert(bookPageFingerprints).values(old.map((p) => ({ bookId: input.bookId, version: input.currentVersion, ...p }))).onConflictDoNothing();
    }
  }
  const fresh = await fingerprintPages(storage, rows(await db.execute(sql`select number, plain_text, images from book_version_pages where version_id = ${input.versionId} order by number`)));
  const matches = matchPages(fresh, old);
  await db.delete(bookPageFingerprints).where(and(eq(bookPageFingerprints.bookId, input.bookId), eq(bookPageFingerprints.version, input.version)));
  if (fresh.length > 0) {
    await db.insert(bookPageFingerprints).values(fresh.map((p) => {
      const match = matches.get(p.pageNumber);
      return { bookId: input.bookId, version: input.version, ...p, matchVersion: match === undefined ? null : input.currentVersion, matchPage: match ?? null };
    }));
  }
  return matches.size;
}

/**
 * For page figures of `version` across versions: each (version, page) whose
 * page is the same as a page of `version`, following the matches back
 * version by version, with the page number it has in `version`.
 */
export async function matchedPagesOf(db: DbOrTx, bookId: number, version: number): Promise<{ version: number; page: number; as: number }[]> {
  const all = await db.select().from(bookPageFingerprints).where(eq(bookPageFingerprints.bookId, bookId));
  const byVersion = new Map<number, typeof all>();
  for (const row of all) byVersion.set(row.version, [...(byVersion.get(row.version) ?? []), row]);
  const out: { version: number; page: number; as: number }[] = [];
  let level = new Map<number, number>(); // page in the version being walked → page in `version`
  let walking: number | null = version;
  for (const row of byVersion.get(version) ?? []) level.set(row.pageNumber, row.pageNumber);
  const seen = new Set<number>();
  while (walking !== null && level.size > 0 && !seen.has(walking)) {
    seen.add(walking);
    const next = new Map<number, number>();
    let previous: number | null = null;
    for (const row of byVersion.get(walking) ?? []) {
      const as = level.get(row.pageNumber);
      if (as === undefined || row.matchVersion === null || row.matchPage === null) continue;
      previous = row.matchVersion;
      next.set(row.matchPage, as);
      out.push({ version: row.matchVersion, page: row.matchPage, as });
    }
    level = next;
    walking = previous;
  }
  return out;
}
