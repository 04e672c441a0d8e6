/**
 * Just enough of the TrueType (sfnt) format for tests to make the fonts real
 * PDFs carry: look glyphs up through the font's cmap, and rewrite a font
 * without some of its tables (a font with no cmap, as subsetting producers
 * embed them for CID-keyed fonts).
 */
import { readFileSync } from 'node:fs';

interface Table {
  tag: string;
  data: Buffer;
}

export function readTables(font: Buffer): Table[] {
  const count = font.readUInt16BE(4);
  const tables: Table[] = [];
  for (let i = 0; i < count; i++) {
    const at = 12 + i * 16;
    const tag = font.toString('latin1', at, at + 4);
    const offset = font.readUInt32BE(at + 8);
    const length = font.readUInt32BE(at + 12);
    tables.push({ tag, data: font.subarray(offset, offset + length) });
  }
  return tables;
}

function checksum(data: Buffer): number {
  const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
  let sum = 0;
  for (let i = 0; i < padded.length; i += 4) sum = (sum + padded.readUInt32BE(i)) >>> 0;
  return sum;
}

/** The font rewritten with only the tables `keep` accepts (offsets, checksums and head's adjustment recomputed). */
export function rewriteFont(font: Buffer, keep: (tag: string) => boolean): Buffer {
  return fromTables(readTables(font).filter((t) => keep(t.tag)));
}

function fromTables(list: Table[]): Buffer {
  const tables = [...list].sort((a, b) => (a.tag < b.tag ? -1 : 1));
  const n = tables.length;
  const entrySelector = Math.floor(Math.log2(n));
  const searchRange = 2 ** entrySelector * 16;
  const header = Buffer.alloc(12 + n * 16);
  header.writeUInt32BE(0x00010000, 0);
  header.writeUInt16BE(n, 4);
  header.writeUInt16BE(searchRange, 6);
  header.writeUInt16BE(entrySelector, 8);
  header.writeUInt16BE(n * 16 - searchRange, 10);
  const bodies: Buffer[] = [];
  let offset = header.length;
  tables.forEach((table, i) => {
    const data = Buffer.from(table.data);
    if (table.tag === 'head') data.writeUInt32BE(0, 8); // checkSumAdjustment, recomputed below
    const at = 12 + i * 16;
    header.write(table.tag, at, 'latin1');
    header.writeUInt32BE(checksum(data), at + 4);
    header.writeUInt32BE(offset, at + 8);
    header.writeUInt32BE(data.length, at + 12);
    const padded = Buffer.concat([data, Buffer.alloc((4 - (data.length % 4)) % 4)]);
    bodies.push(padded);
    offset += padded.length;
  });
  const out = Buffer.concat([header, ...bodies]);
  const headIndex = tables.findIndex((t) => t.tag === 'head');
  if (headIndex >= 0) {
    const headOffset = header.readUInt32BE(12 + headIndex * 16 + 8);
    out.writeUInt32BE((0xb1b0afba - checksum(out)) >>> 0, headOffset + 8);
  }
  return out;
}

/** Glyph id of each character, through the font's (3,1) format 4 cmap; 0 where the font has none. */
export function glyphIds(font: Buffer, text: string): number[] {
  const cmap = readTables(font).find((t) => t.tag === 'cmap')?.data;
  if (!cmap) throw new Error('the font has no cmap');
  let sub: Buffer | undefined;
  for (let i = 0; i < cmap.readUInt16BE(2); i++) {
    const platform = cmap.readUInt16BE(4 + i * 8);
    const encoding = cmap.readUInt16BE(6 + i * 8);
    const offset = cmap.readUInt32BE(8 + i * 8);
    if (platform === 3 && encoding === 1 && cmap.readUInt16BE(offset) === 4) sub = cmap.subarray(offset);
  }
  if (!sub) throw new Error('no (3,1) format 4 cmap');
  const segments = sub.readUInt16BE(6) / 2;
  const ends = 14;
  const starts = ends + segments * 2 + 2;
  const deltas = starts + segments * 2;
  const rangeOffsets = deltas + segments * 2;
  return [...text].map((char) => {
    const code = char.codePointAt(0)!;
    for (let s = 0; s < segments; s++) {
      if (code > sub.readUInt16BE(ends + s * 2)) continue;
      const start = sub.readUInt16BE(starts + s * 2);
      if (code < start) return 0;
      const delta = sub.readUInt16BE(deltas + s * 2);
      const rangeOffset = sub.readUInt16BE(rangeOffsets + s * 2);
      if (rangeOffset === 0) return (code + delta) & 0xffff;
      const glyph = sub.readUInt16BE(rangeOffsets + s * 2 + rangeOffset + (code - start) * 2);
      return glyph === 0 ? 0 : (glyph + delta) & 0xffff;
    }
    return 0;
  });
}

export const DEJAVU_BOLD = '/usr/share/fonts/truetype/dejavu/DejaVuSans-Bold.ttf';
export const readFont = (file: string) => readFileSync(file);

/** Advance widths of glyphs in PDF glyph space (1000 units to the em), from hmtx. */
export function advanceWidths(font: Buffer, glyphs: number[]): number[] {
  const tables = readTables(font);
  const head = tables.find((t) => t.tag === 'head')!.data;
  const hhea = tables.find((t) => t.tag === 'hhea')!.data;
  const hmtx = tables.find((t) => t.tag === 'hmtx')!.data;
  const unitsPerEm = head.readUInt16BE(18);
  const metrics = hhea.readUInt16BE(34);
  return glyphs.map((glyph) => Math.round((hmtx.readUInt16BE(Math.min(glyph, metrics - 1) * 4) * 1000) / unitsPerEm));
}

