/**
 * Fonts for generated PDFs, shipped with the service from npm (Noto, SIL Open
 * Font License, through @fontsource/*) so a book renders the same on every
 * machine and never depends on what the host has installed.
 *
 * Fontsource splits each family into files by Unicode range (latin, cyrillic,
 * arabic, and 100 numbered Chinese subsets) and lists the ranges in
 * unicode.json. We pick, per character, the first face of the chain that
 * covers it: Noto Sans (Latin, Greek, Cyrillic, Vietnamese, Devanagari), then
 * Noto Sans Arabic, then Noto Sans SC (CJK ideographs, kana, hangul basics).
 * pdfkit embeds each face used as a subset with its ToUnicode map, so the
 * text stays selectable and searchable.
 */
import { readFileSync } from 'node:fs';
import { inflateSync } from 'node:zlib';
import { createRequire } from 'node:module';
import path from 'node:path';

export type FontWeight = 400 | 700;

interface Face {
  /** pdfkit font name, unique per file. */
  name: string;
  file: string;
  ranges: Array<[number, number]>;
}

const require = createRequire(import.meta.url);
const FAMILIES = ['noto-sans', 'noto-sans-arabic', 'noto-sans-sc'] as const;

function parseRanges(text: string): Array<[number, number]> {
  const ranges: Array<[number, number]> = [];
  for (const part of text.split(',')) {
    const spec = part.trim().replace(/^U\+/i, '');
    if (!spec) continue;
    if (spec.includes('?')) {
      ranges.push([parseInt(spec.replace(/\?/g, '0'), 16), parseInt(spec.replace(/\?/g, 'f'), 16)]);
    } else {
      const [from, to] = spec.split('-');
      ranges.push([parseInt(from!, 16), parseInt(to ?? from!, 16)]);
    }
  }
  return ranges;
}

function loadFaces(weight: FontWeight): Face[] {
  const faces: Face[] = [];
  for (const family of FAMILIES) {
    const dir = path.dirname(require.resolve(`@fontsource/${family}/package.json`));
    const unicode = JSON.parse(readFileSync(path.join(dir, 'unicode.json'), 'utf8')) as Record<string, string>;
    for (const [subsetKey, ranges] of Object.entries(unicode)) {
      const subset = subsetKey.replace(/^\[(\d+)\]$/, '$1');
      // The Arabic family repeats Latin subsets; Noto Sans already covers them.
      if (family !== 'noto-sans' && /latin|vietnamese/.test(subset)) continue;
      const file = path.join(dir, 'files', `${family}-${subset}-${weight}-normal.woff`);
      faces.push({ name: `${family}-${subset}-${weight}`, file, ranges: parseRanges(ranges) });
    }
  }
  return faces;
}

const facesByWeight = new Map<FontWeight, Face[]>();
function faces(weight: FontWeight): Face[] {
  let list = facesByWeight.get(weight);
  if (!list) {
    list = loadFaces(weight);
    facesByWeight.set(weight, list);
  }
  return list;
}

const cache = new Map<string, Face>();
/** The face that draws this code point (the Latin face when none covers it: it has a .notdef box). */
export function faceFor(codePoint: number, weight: FontWeight): Face {
  const key = `${weight}:${codePoint}`;
  const cached = cache.get(key);
  if (cached) return cached;
  const list = faces(weight);
  const found = list.find((face) => face.ranges.some(([from, to]) => codePoint >= from && codePoint <= to)) ?? list.find((f) => f.name.endsWith(`latin-${weight}`))!;
  if (cache.size < 50_000) cache.set(key, found);
  return found;
}

export interface TextRun {
  text: string;
  face: Face;
}

const NEUTRAL = /[\s\d.,:;!?'"()[\]{}\-–—/\\+*%&#@€$£¥·•|]/u;

/** Splits text into runs drawn by one face each; spaces and punctuation stay with the run around them. */
export function textRuns(text: string, weight: FontWeight): TextRun[] {
  const runs: TextRun[] = [];
  for (const char of text) {
    const previous = runs.at(-1);
    if (previous && NEUTRAL.test(char) && previous.face.ranges.some(([a, b]) => char.codePointAt(0)! >= a && char.codePointAt(0)! <= b)) {
      previous.text += char;
      continue;
    }
    const face = faceFor(char.codePointAt(0)!, weight);
    if (previous && previous.face === face) previous.text += char;
    else runs.push({ text: char, face });
  }
  return runs;
}

/**
 * WOFF (zlib-compressed tables) → plain TrueType, once per face and process.
 * fontkit would inflate the tables in JavaScript on every document, which was
 * most of a catalog's render time; node's zlib does it natively, once.
 */
function woffToSfnt(woff: Buffer): Buffer {
  const tableCount = woff.readUInt16BE(12);
  const headerSize = 12 + tableCount * 16;
  const tables: Array<{ tag: number; checksum: number; data: Buffer }> = [];
  for (let i = 0; i < tableCount; i++) {
    const entry = 44 + i * 20;
    const offset = woff.readUInt32BE(entry + 4);
    const compLength = woff.readUInt32BE(entry + 8);
    const origLength = woff.readUInt32BE(entry + 12);
    const raw = woff.subarray(offset, offset + compLength);
    tables.push({ tag: woff.readUInt32BE(entry), checksum: woff.readUInt32BE(entry + 16), data: compLength < origLength ? inflateSync(raw) : Buffer.from(raw) });
  }
  let size = headerSize;
  for (const t of tables) size += (t.data.length + 3) & ~3;
  const out = Buffer.alloc(size);
  out.writeUInt32BE(woff.readUInt32BE(4), 0); // flavor (sfnt version)
  out.writeUInt16BE(tableCount, 4);
  let power = 1;
  let log = 0;
  while (power * 2 <= tableCount) { power *= 2; log += 1; }
  out.writeUInt16BE(power * 16, 6);
  out.writeUInt16BE(log, 8);
  out.writeUInt16BE(tableCount * 16 - power * 16, 10);
  let offset = headerSize;
  tables.forEach((t, i) => {
    const entry = 12 + i * 16;
    out.writeUInt32BE(t.tag, entry);
    out.writeUInt32BE(t.checksum, entry + 4);
    out.writeUInt32BE(offset, entry + 8);
    out.writeUInt32BE(t.data.length, entry + 12);
    t.data.copy(out, offset);
    offset += (t.data.length + 3) & ~3;
  });
  return out;
}

const sfntCache = new Map<string, Buffer>();
/** The face as TrueType bytes for pdfkit (decompressed once per process). */
export function fontBytes(file: string): Buffer {
  let bytes = sfntCache.get(file);
  if (!bytes) {
    bytes = woffToSfnt(readFileSync(file));
    sfntCache.set(file, bytes);
  }
  return bytes;
}
