/**
 * Documents the conversion tests make themselves (pdf-lib, sharp, hand-built
 * containers) and access to the shared real-world corpus, which tests skip
 * with a message when ../shared is absent.
 */
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import assert from 'node:assert/strict';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { PDFDocument, PDFHexString, PDFName, PDFNull, PDFString, StandardFonts, degrees, type PDFPage, type PDFRef } from 'pdf-lib';
import { ConversionError, convertDocument, type ConversionResult, type ConvertInput, type RenderedPage } from '../../src/modules/conversion/conversion.service.ts';

export { CORPUS_DIR, CORPUS_SKIP, corpus } from '../documents.ts';

export async function withWorkDir<T>(fn: (dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(path.join(tmpdir(), 'flipbook-conversion-test-'));
  try {
    return await fn(dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export async function writeTemp(dir: string, name: string, data: Uint8Array | string): Promise<string> {
  const file = path.join(dir, name);
  await writeFile(file, data);
  return file;
}

export interface Converted {
  result: ConversionResult;
  pages: RenderedPage[];
  startedWith: { pageCount: number; beforeFirstPage: boolean } | null;
}

/** Runs convertDocument in a fresh work dir and collects every page (metadata only: files are gone afterwards). */
export async function convert(filePath: string, options: Partial<ConvertInput> = {}, inspect?: (page: RenderedPage, workDir: string) => Promise<void>): Promise<Converted> {
  return withWorkDir(async (workDir) => {
    const pages: RenderedPage[] = [];
    let startedWith: Converted['startedWith'] = null;
    const result = await convertDocument(
      {
        filePath,
        autoLinks: false,
        workDir,
        ...options,
        onStart: (info) => {
          startedWith = { pageCount: info.pageCount, beforeFirstPage: pages.length === 0 };
        },
      },
      async (page) => {
        pages.push(page);
        await inspect?.(page, workDir);
      },
    );
    return { result, pages, startedWith };
  });
}

export const A4: [number, number] = [595.28, 841.89];

export interface PdfSpec {
  /** One entry per page: its size in points, optional /Rotate and text lines. */
  pages: { size?: [number, number]; rotate?: number; lines?: string[] }[];
  title?: string;
  /** On page 1: a URI link, an explicit-destination link and a named-destination link to the last page. */
  links?: boolean;
  /** Outline: "Start" → page 1 with child "Detail" → page 2, and "End" → last page by name. */
  outline?: boolean;
}

/** Text is drawn 72 pt from the left, the first line's baseline 100 pt from the top, 24 pt apart. */
export async function makePdf(spec: PdfSpec): Promise<Uint8Array> {
  const doc = await PDFDocument.create();
  const font = await doc.embedFont(StandardFonts.Helvetica);
  if (spec.title) doc.setTitle(spec.title);
  const pages: PDFPage[] = [];
  spec.pages.forEach((pageSpec, index) => {
    const [width, height] = pageSpec.size ?? A4;
    const page = doc.addPage([width, height]);
    const lines = pageSpec.lines ?? [`Page ${index + 1} of ${spec.pages.length}`];
    lines.forEach((line, i) => page.drawText(line, { x: 72, y: height - 100 - i * 24, size: 16, font }));
    if (pageSpec.rotate) page.setRotation(degrees(pageSpec.rotate));
    pages.push(page);
  });
  const first = pages[0]!;
  const last = pages[pages.length - 1]!;
  const ctx = doc.context;

  if (spec.links || spec.outline) {
    // Named destination "the-end" → last page, in the catalog's /Names /Dests tree.
    const dests = ctx.obj({ Names: [PDFString.of('the-end'), ctx.obj([last.ref, PDFName.of('Fit')])] });
    doc.catalog.set(PDFName.of('Names'), ctx.obj({ Dests: dests }));
  }
  if (spec.links) {
    const annots = [
      ctx.obj({
        Type: 'Annot', Subtype: 'Link', Rect: [72, 400, 272, 430], Border: [0, 0, 0],
        A: { Type: 'Action', S: 'URI', URI: PDFString.of('https://example.com/annotated') },
      }),
      ctx.obj({ Type: 'Annot', Subtype: 'Link', Rect: [72, 300, 272, 330], Border: [0, 0, 0], Dest: [pages[1]?.ref ?? last.ref, PDFName.of('XYZ'), PDFNull, PDFNull, PDFNull] }),
      ctx.obj({ Type: 'Annot', Subtype: 'Link', Rect: [72, 200, 272, 230], Border: [0, 0, 0], Dest: PDFString.of('the-end') }),
    ].map((annot) => ctx.register(annot));
    first.node.set(PDFName.of('Annots'), ctx.obj(annots));
  }
  if (spec.outline) {
    const outlinesRef = ctx.nextRef();
    const [startRef, detailRef, endRef] = [ctx.nextRef(), ctx.nextRef(), ctx.nextRef()] as [PDFRef, PDFRef, PDFRef];
    const dest = (page: PDFPage) => ctx.obj([page.ref, PDFName.of('XYZ'), PDFNull, PDFNull, PDFNull]);
    ctx.assign(startRef, ctx.obj({ Title: PDFHexString.fromText('Start'), Parent: outlinesRef, Next: endRef, First: detailRef, Last: detailRef, Count: 1, Dest: dest(first) }));
    ctx.assign(detailRef, ctx.obj({ Title: PDFHexString.fromText('Detail'), Parent: startRef, Dest: dest(pages[1] ?? first) }));
    ctx.assign(endRef, ctx.obj({ Title: PDFHexString.fromText('End'), Parent: outlinesRef, Prev: startRef, Dest: PDFString.of('the-end') }));
    ctx.assign(outlinesRef, ctx.obj({ Type: 'Outlines', First: startRef, Last: endRef, Count: 3 }));
    doc.catalog.set(PDFName.of('Outlines'), outlinesRef);
  }
  return doc.save({ useObjectStreams: false });
}

/** A classic-xref PDF from raw object bodies (for deliberately malformed structures). */
export function rawPdf(objects: string[], rootRef = '1 0 R'): Uint8Array {
  let body = '%PDF-1.7\n';
  const offsets: number[] = [];
  objects.forEach((object, index) => {
    offsets.push(Buffer.byteLength(body));
    body += `${index + 1} 0 obj\n${object}\nendobj\n`;
  });
  const xrefAt = Buffer.byteLength(body);
  body += `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const offset of offsets) body += `${String(offset).padStart(10, '0')} 00000 n \n`;
  body += `trailer\n<< /Root ${rootRef} /Size ${objects.length + 1} >>\nstartxref\n${xrefAt}\n%%EOF\n`;
  return Buffer.from(body, 'latin1');
}

/**
 * A minimal OLE2 compound file whose root storage holds empty streams with the
 * given names: enough for type detection, which reads only the directory.
 */
export function makeCfb(streamNames: string[]): Buffer {
  if (streamNames.length > 3) throw new Error('one directory sector holds the root and three streams');
  const sector = 512;
  const file = Buffer.alloc(sector * 3, 0);
  Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]).copy(file, 0);
  file.writeUInt16LE(0x3e, 0x18); // minor version
  file.writeUInt16LE(3, 0x1a); // major version 3: 512-byte sectors
  file.writeUInt16LE(0xfffe, 0x1c); // little-endian
  file.writeUInt16LE(9, 0x1e); // sector shift
  file.writeUInt16LE(6, 0x20); // mini sector shift
  file.writeUInt32LE(1, 0x2c); // one FAT sector
  file.writeUInt32LE(1, 0x30); // directory starts at sector 1
  file.writeUInt32LE(4096, 0x38);
  file.writeUInt32LE(0xfffffffe, 0x3c); // no mini FAT
  file.writeUInt32LE(0xfffffffe, 0x44); // no DIFAT sectors
  file.writeUInt32LE(0, 0x4c); // FAT lives in sector 0
  for (let i = 1; i < 109; i++) file.writeUInt32LE(0xffffffff, 0x4c + i * 4);
  // FAT (sector 0 at file offset 512): sector 0 is the FAT, sector 1 the one-sector directory chain.
  const fat = sector;
  file.writeUInt32LE(0xfffffffd, fat);
  file.writeUInt32LE(0xfffffffe, fat + 4);
  for (let i = 2; i < 128; i++) file.writeUInt32LE(0xffffffff, fat + i * 4);
  // Directory (sector 1 at file offset 1024): root, then the streams as a chain of right siblings.
  const dir = sector * 2;
  const entry = (index: number, name: string, type: number, right: number, child: number) => {
    const at = dir + index * 128;
    file.write(name, at, 'utf16le');
    file.writeUInt16LE((name.length + 1) * 2, at + 0x40);
    file[at + 0x42] = type;
    file[at + 0x43] = 1; // black
    file.writeUInt32LE(0xffffffff, at + 0x44);
    file.writeUInt32LE(right, at + 0x48);
    file.writeUInt32LE(child, at + 0x4c);
    file.writeUInt32LE(0xfffffffe, at + 0x74);
  };
  entry(0, 'Root Entry', 5, 0xffffffff, streamNames.length > 0 ? 1 : 0xffffffff);
  streamNames.forEach((name, i) => entry(i + 1, name, 2, i + 2 <= streamNames.length ? i + 2 : 0xffffffff, 0xffffffff));
  return file;
}

/** Awaits a promise that must reject with a ConversionError, and returns that error. */
export async function failure(promise: Promise<unknown>): Promise<ConversionError> {
  try {
    await promise;
  } catch (error) {
    assert.ok(error instanceof ConversionError, String(error));
    return error;
  }
  assert.fail('expected a ConversionError');
}
