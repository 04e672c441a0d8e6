/**
 * Documents made the way the real ones of issue 32 are made, byte by byte:
 * vertical Japanese with an Identity-V CID font, Arabic painted in visual
 * order, and a table set in an embedded TrueType font without a cmap table.
 * The font is DejaVu Sans Bold from the machine (Debian fonts-dejavu-core);
 * the tests skip when it is absent.
 */
import { existsSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { DEJAVU_BOLD, advanceWidths, glyphIds, readFont, rewriteFont } from './sfnt.ts';

export const FONT_SKIP = existsSync(DEJAVU_BOLD) ? false : `${DEJAVU_BOLD} is not installed (Debian: fonts-dejavu-core)`;

/** A PDF from object bodies; `streams` holds binary stream data by object number, written after `stream`. */
export function pdfFromObjects(objects: (string | { dict: string; data: Buffer })[]): Buffer {
  const parts: Buffer[] = [Buffer.from('%PDF-1.7\n%\xe2\xe3\xcf\xd3\n', 'latin1')];
  let length = parts[0]!.length;
  const offsets: number[] = [];
  const push = (chunk: Buffer) => {
    parts.push(chunk);
    length += chunk.length;
  };
  objects.forEach((object, index) => {
    offsets.push(length);
    push(Buffer.from(`${index + 1} 0 obj\n`, 'latin1'));
    if (typeof object === 'string') push(Buffer.from(object, 'latin1'));
    else {
      push(Buffer.from(`${object.dict.replace(/>>\s*$/, '')} /Length ${object.data.length} >>\nstream\n`, 'latin1'));
      push(object.data);
      push(Buffer.from('\nendstream', 'latin1'));
    }
    push(Buffer.from('\nendobj\n', 'latin1'));
  });
  const xrefAt = length;
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) tail += `${String(offset).padStart(10, '0')} 00000 n \n`;
  tail += `trailer\n<< /Root 1 0 R /Size ${objects.length + 1} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  push(Buffer.from(tail, 'latin1'));
  return Buffer.concat(parts);
}

const hex4 = (n: number) => n.toString(16).padStart(4, '0').toUpperCase();
const utf16Hex = (text: string) => Buffer.from(text, 'utf16le').swap16().toString('hex').toUpperCase();

/** A ToUnicode CMap: code (2 bytes) → text. */
function toUnicode(map: Map<number, string>): Buffer {
  const entries = [...map].map(([code, text]) => `<${hex4(code)}> <${utf16Hex(text)}>`);
  const chunks: string[] = [];
  for (let i = 0; i < entries.length; i += 100) chunks.push(`${Math.min(100, entries.length - i)} beginbfchar\n${entries.slice(i, i + 100).join('\n')}\nendbfchar`);
  return Buffer.from(
    '/CIDInit /ProcSet findresource begin\n12 dict begin\nbegincmap\n/CIDSystemInfo << /Registry (Adobe) /Ordering (UCS) /Supplement 0 >> def\n' +
      '/CMapName /Adobe-Identity-UCS def\n/CMapType 2 def\n1 begincodespacerange\n<0000> <FFFF>\nendcodespacerange\n' +
      `${chunks.join('\n')}\nendcmap\nCMapName currentdict /CMap defineresource pop\nend\nend\n`,
    'latin1',
  );
}

/**
 * Vertical Japanese as DTP tools write it: a Type0 font with the Identity-V
 * encoding over an embedded CIDFontType2 (CIDToGIDMap Identity, default
 * vertical metrics), glyphs chosen by 2-byte codes, a ToUnicode CMap; columns
 * painted right to left, each one `Tj` going down the page, and ruby as a
 * smaller column beside its base. DejaVu has no kana, so each character is
 * drawn with a stand-in glyph (a letter) while ToUnicode gives the Japanese
 * text, as a subset font's private glyph ids would.
 */
export function verticalJapanesePdf(columns: string[], ruby: { column: number; text: string }): Buffer {
  const font = readFont(DEJAVU_BOLD);
  const standIns = glyphIds(font, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ');
  // Subset fonts number their glyphs in order of use: CID n is the n-th character, its glyph a stand-in.
  const codes = new Map<string, number>();
  const codeOf = (char: string) => {
    if (!codes.has(char)) codes.set(char, codes.size + 1);
    return codes.get(char)!;
  };
  const size = 18;
  const [width, height] = [298, 420]; // A6 portrait, a bunkobon page
  let content = '';
  columns.forEach((column, i) => {
    const x = width - 40 - i * size * 1.8;
    content += `BT /F1 ${size} Tf 1 0 0 1 ${x} ${height - 40} Tm <${[...column].map((c) => hex4(codeOf(c))).join('')}> Tj ET\n`;
  });
  const rubyX = width - 40 - ruby.column * size * 1.8 + size * 0.75;
  content += `BT /F1 ${size / 2} Tf 1 0 0 1 ${rubyX} ${height - 40} Tm <${[...ruby.text].map((c) => hex4(codeOf(c))).join('')}> Tj ET\n`;
  const unicode = new Map([...codes].map(([char, code]) => [code, char]));
  const cidToGid = Buffer.alloc(2 * (codes.size + 1));
  for (const code of codes.values()) cidToGid.writeUInt16BE(standIns[(code - 1) % standIns.length]!, code * 2);
  return pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R /Lang (ja) /ViewerPreferences << /Direction /R2L >> >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    `<< /Type /Page /Parent 2 0 R /MediaBox [0 0 ${width} ${height}] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>`,
    { dict: '<< /Filter /FlateDecode >>', data: deflateSync(content) },
    '<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+DejaVuSans-Bold /Encoding /Identity-V /DescendantFonts [6 0 R] /ToUnicode 9 0 R >>',
    '<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+DejaVuSans-Bold /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> ' +
      '/FontDescriptor 7 0 R /DW 1000 /DW2 [880 -1000] /CIDToGIDMap 10 0 R >>',
    '<< /Type /FontDescriptor /FontName /ABCDEF+DejaVuSans-Bold /Flags 4 /FontBBox [-1069 -415 1975 1174] /ItalicAngle 0 /Ascent 928 /Descent -236 /CapHeight 729 /StemV 80 /FontFile2 8 0 R >>',
    { dict: '<< /Filter /FlateDecode /Length1 ' + font.length + ' >>', data: deflateSync(font) },
    { dict: '<< /Filter /FlateDecode >>', data: deflateSync(toUnicode(unicode)) },
    { dict: '<< /Filter /FlateDecode >>', data: deflateSync(cidToGid) },
  ]);
}

/**
 * Vertical Japanese in a font the PDF does not embed, as older Japanese
 * DTP output names it: Ryumin-Light through the predefined UniJIS-UCS2-V CMap
 * (2-byte UCS-2 codes), one `Tj` per column, columns right to left.
 */
export function verticalJapaneseNotEmbeddedPdf(columns: string[]): Buffer {
  const ucs2 = (text: string) => Buffer.from(text, 'utf16le').swap16().toString('hex');
  const content = columns.map((column, i) => `BT /F1 18 Tf 1 0 0 1 ${258 - i * 32} 380 Tm <${ucs2(column)}> Tj ET\n`).join('');
  return pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 298 420] /Contents 4 0 R /Resources << /Font << /F1 5 0 R >> >> >>',
    { dict: '<< /Filter /FlateDecode >>', data: deflateSync(content) },
    '<< /Type /Font /Subtype /Type0 /BaseFont /Ryumin-Light-UniJIS-UCS2-V /Encoding /UniJIS-UCS2-V /DescendantFonts [6 0 R] >>',
    '<< /Type /Font /Subtype /CIDFontType0 /BaseFont /Ryumin-Light /CIDSystemInfo << /Registry (Adobe) /Ordering (Japan1) /Supplement 2 >> /FontDescriptor 7 0 R /DW 1000 /W [231 632 500] >>',
    '<< /Type /FontDescriptor /FontName /Ryumin-Light /Flags 6 /FontBBox [-170 -331 1024 903] /ItalicAngle 0 /Ascent 723 /Descent -241 /CapHeight 709 /StemV 69 >>',
  ]);
}

/**
 * An embedded CID-keyed TrueType font as word processors write it: Type0 over
 * CIDFontType2 with Identity-H, CIDToGIDMap Identity (codes are glyph ids),
 * /W from the font's advances and a ToUnicode CMap for the glyphs used.
 * `objects` are the font's four objects, numbered from `first`.
 */
function embeddedCidFont(font: Buffer, first: number, toText: Map<number, string>, name = 'DejaVuSans-Bold'): (string | { dict: string; data: Buffer })[] {
  const glyphs = [...toText.keys()].sort((a, b) => a - b);
  const widths = advanceWidths(font, glyphs);
  const w = glyphs.map((glyph, i) => `${glyph} [${widths[i]}]`).join(' ');
  return [
    `<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+${name} /Encoding /Identity-H /DescendantFonts [${first + 1} 0 R] /ToUnicode ${first + 3} 0 R >>`,
    `<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+${name} /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> ` +
      `/FontDescriptor ${first + 2} 0 R /DW 1000 /W [${w}] /CIDToGIDMap /Identity >>`,
    `<< /Type /FontDescriptor /FontName /ABCDEF+${name} /Flags 4 /FontBBox [-1069 -415 1975 1174] /ItalicAngle 0 /Ascent 928 /Descent -236 /CapHeight 729 /StemV 80 /FontFile2 ${first + 4} 0 R >>`,
    { dict: '<< /Filter /FlateDecode >>', data: deflateSync(toUnicode(toText)) },
    { dict: `<< /Filter /FlateDecode /Length1 ${font.length} >>`, data: deflateSync(font) },
  ];
}

/**
 * A line "habibi حَبيبي" on pages rotated 0, 90, 180 and 270 degrees, the
 * Arabic word painted as word processors paint it: its shaped glyphs
 * (initial, medial, final forms) in visual order, left to right, the fatha
 * before the letter it sits on, each glyph mapped by ToUnicode to the letter
 * it stands for. `mode`: the two words as two runs, as one run, every
 * Arabic glyph placed by its own Tm, or one TJ with kerning between glyphs.
 */
export function visualOrderArabicPdf(rotations = [0, 90, 180, 270], mode: 'runs' | 'line' | 'glyphs' | 'tj' = 'runs'): Buffer {
  const font = readFont(DEJAVU_BOLD);
  // Logical: ح َ ب ي ب ي. Shaped: ﺣ (initial) َ ﺒ (medial) ﻴ (medial) ﺒ (medial) ﻲ (final).
  const shaped: [string, string][] = [['\uFEA3', '\u062D'], ['\u064E', '\u064E'], ['\uFE92', '\u0628'], ['\uFEF4', '\u064A'], ['\uFE92', '\u0628'], ['\uFEF2', '\u064A']];
  const visual = [shaped[5]!, shaped[4]!, shaped[3]!, shaped[2]!, shaped[1]!, shaped[0]!];
  const latin = 'habibi';
  const toText = new Map<number, string>();
  const codes = (pairs: [string, string][]) =>
    pairs.map(([form, letter]) => {
      const [glyph] = glyphIds(font, form);
      toText.set(glyph!, letter);
      return hex4(glyph!);
    }).join('');
  const latinHex = codes([...latin].map((c) => [c, c]));
  const arabicHex = codes(visual);
  const space = codes([[' ', ' ']]);
  let content = '';
  if (mode === 'runs') content = `BT /F1 28 Tf 1 0 0 1 100 600 Tm <${latinHex}> Tj ET\nBT /F1 28 Tf 1 0 0 1 260 600 Tm <${arabicHex}> Tj ET\n`;
  else if (mode === 'line') content = `BT /F1 28 Tf 1 0 0 1 100 600 Tm <${latinHex}${space}${arabicHex}> Tj ET\n`;
  else if (mode === 'tj') {
    content = `BT /F1 28 Tf 1 0 0 1 100 600 Tm [<${latinHex}> -2200 ${arabicHex.match(/.{4}/g)!.map((h) => `<${h}> -30`).join(' ')}] TJ ET\n`;
  } else {
    const widths = advanceWidths(font, visual.map(([form]) => glyphIds(font, form)[0]!));
    let x = 260;
    content = `BT /F1 28 Tf 1 0 0 1 100 600 Tm <${latinHex}> Tj ET\n`;
    arabicHex.match(/.{4}/g)!.forEach((hex, i) => {
      content += `BT /F1 28 Tf 1 0 0 1 ${x.toFixed(2)} 600 Tm <${hex}> Tj ET\n`;
      x += (widths[i]! * 28) / 1000;
    });
  }
  const pageCount = rotations.length;
  const fontAt = 3 + pageCount * 2;
  const objects: (string | { dict: string; data: Buffer })[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${rotations.map((_, i) => `${3 + i * 2} 0 R`).join(' ')}] /Count ${pageCount} >>`,
  ];
  rotations.forEach((rotation, i) => {
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Rotate ${rotation} /Contents ${4 + i * 2} 0 R /Resources << /Font << /F1 ${fontAt} 0 R >> >> >>`);
    objects.push({ dict: '<< /Filter /FlateDecode >>', data: deflateSync(content) });
  });
  objects.push(...embeddedCidFont(font, fontAt, toText));
  return pdfFromObjects(objects);
}

/**
 * "حَبيبي habibi" as WeasyPrint (Pango, cairo) writes it, on pages rotated 0,
 * 90, 180 and 270 degrees: one line, the Arabic word's shaped glyphs in
 * visual order, and cairo's ToUnicode, which gives the whole cluster's text
 * in logical order to its first glyph and nothing to the others (each glyph
 * its own code, through a CIDToGIDMap).
 */
export function clusterMappedArabicPdf(rotations = [0, 90, 180, 270]): Buffer {
  const font = readFont(DEJAVU_BOLD);
  const visualForms = ['\uFEF2', '\uFE92', '\uFEF4', '\uFE92', '\u064E', '\uFEA3'];
  const glyphs: { glyph: number; text: string }[] = [
    ...[...'habibi '].map((c) => ({ glyph: glyphIds(font, c)[0]!, text: c })),
    ...visualForms.map((form, i) => ({ glyph: glyphIds(font, form)[0]!, text: i === 0 ? 'حَبيبي' : '' })),
  ];
  // Codes 1..n in drawing order; the line is set right-aligned, as an RTL paragraph is.
  const widths = advanceWidths(font, glyphs.map((g) => g.glyph));
  const toText = new Map(glyphs.map((g, i) => [i + 1, g.text]));
  const cidToGid = Buffer.alloc(2 * (glyphs.length + 1));
  glyphs.forEach((g, i) => cidToGid.writeUInt16BE(g.glyph, (i + 1) * 2));
  const lineWidth = widths.reduce((a, b) => a + b, 0) * 0.028;
  const content = `BT /F1 28 Tf 1 0 0 1 ${(540 - lineWidth).toFixed(2)} 700 Tm <${glyphs.map((_, i) => hex4(i + 1)).join('')}> Tj ET\n`;
  const fontAt = 3 + rotations.length * 2;
  const objects: (string | { dict: string; data: Buffer })[] = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [${rotations.map((_, i) => `${3 + i * 2} 0 R`).join(' ')}] /Count ${rotations.length} >>`,
  ];
  rotations.forEach((rotation, i) => {
    objects.push(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 600 800] /Rotate ${rotation} /Contents ${4 + i * 2} 0 R /Resources << /Font << /F1 ${fontAt} 0 R >> >> >>`);
    objects.push({ dict: '<< /Filter /FlateDecode >>', data: deflateSync(content) });
  });
  const w = glyphs.map((_, i) => `${i + 1} [${widths[i]}]`).join(' ');
  objects.push(
    `<< /Type /Font /Subtype /Type0 /BaseFont /ABCDEF+DejaVuSans-Bold /Encoding /Identity-H /DescendantFonts [${fontAt + 1} 0 R] /ToUnicode ${fontAt + 3} 0 R >>`,
    `<< /Type /Font /Subtype /CIDFontType2 /BaseFont /ABCDEF+DejaVuSans-Bold /CIDSystemInfo << /Registry (Adobe) /Ordering (Identity) /Supplement 0 >> /FontDescriptor ${fontAt + 2} 0 R /DW 1000 /W [${w}] /CIDToGIDMap ${fontAt + 5} 0 R >>`,
    `<< /Type /FontDescriptor /FontName /ABCDEF+DejaVuSans-Bold /Flags 4 /FontBBox [-1069 -415 1975 1174] /ItalicAngle 0 /Ascent 928 /Descent -236 /CapHeight 729 /StemV 80 /FontFile2 ${fontAt + 4} 0 R >>`,
    { dict: '<< /Filter /FlateDecode >>', data: deflateSync(toUnicode(toText)) },
    { dict: `<< /Filter /FlateDecode /Length1 ${font.length} >>`, data: deflateSync(font) },
    { dict: '<< /Filter /FlateDecode >>', data: deflateSync(cidToGid) },
  );
  return pdfFromObjects(objects);
}

/**
 * A table of three columns whose middle column (heading, figures, total) is
 * set in an embedded TrueType font without a cmap table: a simple symbolic
 * font with no /Encoding, its glyphs found by their names in the font's post
 * table (as old subsetting tools leave such fonts). Poppler and MuPDF draw
 * it; pdf.js warns "No cmap table available" and draws nothing of it. The
 * other columns use Helvetica.
 * `cid`: the same column in a CID-keyed copy of the font (Identity-H,
 * CIDToGIDMap Identity), where a cmap is not needed at all.
 */
export function noCmapTablePdf(cid = false): Buffer {
  const full = readFont(DEJAVU_BOLD);
  const column = ['Revenue', '12,400', '13,950', '15,210', '16,880', 'Total 58,440'];
  const font = rewriteFont(full, (tag) => tag !== 'cmap');
  const toText = new Map<number, string>();
  const text = (s: string) => cid
    ? `<${[...s].map((c) => {
      const [glyph] = glyphIds(full, c);
      toText.set(glyph!, c);
      return hex4(glyph!);
    }).join('')}>`
    : `(${s})`;
  let content = '';
  const rows = [['Region', 'Costs'], ['North', '9,100'], ['South', '10,020'], ['East', '11,400'], ['West', '12,730'], ['All', '43,250']];
  rows.forEach(([left, right], i) => {
    const y = 500 - i * 40;
    content += `BT /F1 22 Tf 60 ${y} Td (${left}) Tj ET BT /F1 22 Tf 520 ${y} Td (${right}) Tj ET\n`;
    content += `BT /F2 22 Tf 260 ${y} Td ${text(column[i]!)} Tj ET\n`;
  });
  const ascii = Array.from({ length: 95 }, (_, i) => String.fromCharCode(32 + i));
  const simple = [
    `<< /Type /Font /Subtype /TrueType /BaseFont /ABCDEF+DejaVuSans-Bold /FirstChar 32 /LastChar 126 /Widths [${advanceWidths(full, glyphIds(full, ascii.join(''))).join(' ')}] ` +
      '/FontDescriptor 7 0 R >>',
    '<< /Type /FontDescriptor /FontName /ABCDEF+DejaVuSans-Bold /Flags 4 /FontBBox [-1069 -415 1975 1174] /ItalicAngle 0 /Ascent 928 /Descent -236 /CapHeight 729 /StemV 80 /FontFile2 8 0 R >>',
    { dict: `<< /Filter /FlateDecode /Length1 ${font.length} >>`, data: deflateSync(font) },
  ];
  // Two pages with the same table: pdf.js warns about the font only on the first.
  const fontObjects = cid ? embeddedCidFont(font, 6, toText) : simple;
  const page = '/Type /Page /Parent 2 0 R /MediaBox [0 0 760 560] /Contents 4 0 R /Resources << /Font << /F1 5 0 R /F2 6 0 R >> >>';
  return pdfFromObjects([
    '<< /Type /Catalog /Pages 2 0 R >>',
    `<< /Type /Pages /Kids [3 0 R ${6 + fontObjects.length} 0 R] /Count 2 >>`,
    `<< ${page} >>`,
    { dict: '<< /Filter /FlateDecode >>', data: deflateSync(content) },
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    ...fontObjects,
    `<< ${page} >>`,
  ]);
}

/**
 * A page with a filled text field (pdf-lib's form API, appearance generated)
 * and a rubber stamp whose appearance stream draws its words, as Acrobat's
 * "Approved"-style custom stamps are made.
 */
export async function stampAndFormPdf(): Promise<Buffer> {
  const { PDFDocument, PDFName, StandardFonts } = await import('pdf-lib');
  const doc = await PDFDocument.create();
  const helvetica = await doc.embedFont(StandardFonts.Helvetica);
  const page = doc.addPage([600, 800]);
  page.drawText('Purchase order', { x: 72, y: 720, size: 24, font: helvetica });
  const field = doc.getForm().createTextField('customer');
  field.setText('Quillfeather Stationers');
  field.addToPage(page, { x: 72, y: 600, width: 300, height: 30, font: helvetica });
  doc.getForm().updateFieldAppearances(helvetica);
  const ctx = doc.context;
  const appearance = ctx.stream('q 0.8 0 0 RG 4 w 2 2 196 56 re S Q BT /Helv 16 Tf 0.8 0 0 rg 14 22 Td (GEPRUEFT ZAHLBAR) Tj ET', {
    Type: 'XObject', Subtype: 'Form', BBox: [0, 0, 200, 60],
    Resources: { Font: { Helv: helvetica.ref } },
  });
  const stamp = ctx.register(ctx.obj({
    Type: 'Annot', Subtype: 'Stamp', Rect: [320, 400, 520, 460], Name: PDFName.of('Approved'), F: 4,
    AP: { N: ctx.register(appearance) },
  }));
  const annots = page.node.Annots();
  if (annots) annots.push(stamp);
  else page.node.set(PDFName.of('Annots'), ctx.obj([stamp]));
  return Buffer.from(await doc.save({ useObjectStreams: false }));
}
