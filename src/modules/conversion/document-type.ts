/**
 * What a file really is, from its bytes only: the filename and the declared
 * content type of an upload are the user's word and are never trusted (a JPEG
 * renamed .pdf must go down the image path).
 *
 * file-type does the magic-number work; two cases need more:
 * - OLE2 .doc/.xls/.ppt share one container (CFB), told apart by their main
 *   stream's name in the CFB directory;
 * - a PDF may have up to 1 KiB of junk before "%PDF-" (readers accept it, and
 *   file-type only looks at offset 0), or no header at all: a body of
 *   numbered objects with a trailer or startxref is handed to the parser,
 *   which repairs what poppler and MuPDF repair, and the conversion fails
 *   with a clear message if it cannot.
 *
 * Every refusal says once what the file is and what to do; it never repeats
 * the accepted list inside another message.
 */
import { open, stat } from 'node:fs/promises';
import path from 'node:path';
import { fileTypeFromFile } from 'file-type';
import { isCfb, readCfbRootNames } from './cfb-directory.ts';

export type DocumentKind = 'pdf' | 'office' | 'image';
export type DocumentFormat = 'pdf' | 'docx' | 'doc' | 'odt' | 'xlsx' | 'xls' | 'ods' | 'pptx' | 'ppt' | 'odp' | 'jpeg' | 'png';

export interface DetectedType {
  kind: DocumentKind;
  format: DocumentFormat;
  mime: string;
}

const TYPES: Record<DocumentFormat, DetectedType> = {
  pdf: { kind: 'pdf', format: 'pdf', mime: 'application/pdf' },
  docx: { kind: 'office', format: 'docx', mime: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document' },
  doc: { kind: 'office', format: 'doc', mime: 'application/msword' },
  odt: { kind: 'office', format: 'odt', mime: 'application/vnd.oasis.opendocument.text' },
  xlsx: { kind: 'office', format: 'xlsx', mime: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet' },
  xls: { kind: 'office', format: 'xls', mime: 'application/vnd.ms-excel' },
  ods: { kind: 'office', format: 'ods', mime: 'application/vnd.oasis.opendocument.spreadsheet' },
  pptx: { kind: 'office', format: 'pptx', mime: 'application/vnd.openxmlformats-officedocument.presentationml.presentation' },
  ppt: { kind: 'office', format: 'ppt', mime: 'application/vnd.ms-powerpoint' },
  odp: { kind: 'office', format: 'odp', mime: 'application/vnd.oasis.opendocument.presentation' },
  jpeg: { kind: 'image', format: 'jpeg', mime: 'image/jpeg' },
  png: { kind: 'image', format: 'png', mime: 'image/png' },
};

/** Every accepted format, for error messages and API docs. */
export const ACCEPTED_FORMATS: readonly DocumentFormat[] = Object.keys(TYPES) as DocumentFormat[];

export const ACCEPTED_FORMATS_TEXT = 'PDF, Word (DOCX, DOC, ODT), spreadsheets (XLSX, XLS, ODS), presentations (PPTX, PPT, ODP), JPEG or PNG';

/** How far into a file the PDF header and an object body are looked for. */
const HEAD_BYTES = 1024;
const TAIL_BYTES = 2048;
/** "12 0 obj" near the start: the body of a PDF whose header is missing. */
const PDF_OBJECT = /(?:^|[\r\n\s])\d{1,10}\s+\d{1,5}\s+obj\b/;
/** The end of a PDF: its cross-reference pointer or a trailer. */
const PDF_TAIL = /startxref|trailer|%%EOF/;

/**
 * file-type extension → our format. Templates and macro-enabled variants are
 * the same formats to LibreOffice (which never runs their macros headless).
 */
const FROM_FILE_TYPE: Record<string, DocumentFormat> = {
  pdf: 'pdf',
  ai: 'pdf', // Illustrator files are PDFs with private data; file-type names them apart.
  docx: 'docx',
  docm: 'docx',
  dotx: 'docx',
  dotm: 'docx',
  xlsx: 'xlsx',
  xlsm: 'xlsx',
  xltx: 'xlsx',
  xltm: 'xlsx',
  pptx: 'pptx',
  pptm: 'pptx',
  ppsx: 'pptx',
  ppsm: 'pptx',
  potx: 'pptx',
  potm: 'pptx',
  odt: 'odt',
  ott: 'odt',
  ods: 'ods',
  ots: 'ods',
  odp: 'odp',
  otp: 'odp',
  jpg: 'jpeg',
  png: 'png',
  apng: 'png', // the first frame is the page
};

export type SniffResult = { type: DetectedType; reason?: never } | { type: null; reason: string };

/**
 * Like detectDocumentType, but says in words why a file was not accepted.
 * `filename` (the uploader's word) only picks the words of a message, such as
 * "Word" for a password-protected .docx; it never decides the type.
 */
export async function sniffDocument(filePath: string, filename?: string): Promise<SniffResult> {
  const { size } = await stat(filePath);
  if (size === 0) return { type: null, reason: 'The file is empty. Upload the document again.' };

  const found = await fileTypeFromFile(filePath);
  const format = found ? FROM_FILE_TYPE[found.ext] : undefined;
  if (format) return { type: TYPES[format] };

  const head = Buffer.from(await readAt(filePath, 0, HEAD_BYTES));
  if (found?.ext === 'cfb' || isCfb(head)) return sniffCfb(filePath, filename);
  // "%PDF-" a little past the start: still a PDF to every reader.
  if (head.indexOf('%PDF-') >= 0) return { type: TYPES.pdf };
  // No header at all, but a PDF body: let the parser try (it repairs what it can).
  if (!found && PDF_OBJECT.test(head.toString('latin1'))) {
    const tail = Buffer.from(await readAt(filePath, Math.max(0, size - TAIL_BYTES), TAIL_BYTES)).toString('latin1');
    if (PDF_TAIL.test(tail)) return { type: TYPES.pdf };
  }

  const what = found ? `a ${found.ext.toUpperCase()} file (${found.mime}), which cannot be converted` : 'not a document we can convert';
  return { type: null, reason: `This file is ${what}. Upload one of: ${ACCEPTED_FORMATS_TEXT} (the type is read from the file's content, not its name).` };
}

/** The document type read from the file's bytes, or null when it is not one we accept. */
export async function detectDocumentType(filePath: string): Promise<DetectedType | null> {
  return (await sniffDocument(filePath)).type;
}

/** The application a password-protected OOXML file belongs to, from its name only (its type is sealed inside). */
function officeApplication(filename: string | undefined): { document: string; app: string } {
  const extension = filename ? path.extname(filename).toLowerCase() : '';
  if (/^\.(docx|docm|dotx|dotm|doc)$/.test(extension)) return { document: 'Word document', app: 'Word' };
  if (/^\.(xlsx|xlsm|xltx|xltm|xls)$/.test(extension)) return { document: 'Excel workbook', app: 'Excel' };
  if (/^\.(pptx|pptm|ppsx|potx|ppt)$/.test(extension)) return { document: 'PowerPoint presentation', app: 'PowerPoint' };
  return { document: 'Office document', app: 'the Office application that made it' };
}

async function sniffCfb(filePath: string, filename?: string): Promise<SniffResult> {
  const names = await readCfbRootNames(filePath);
  if (!names) return { type: null, reason: 'This looks like an old Microsoft Office file, but it is damaged and cannot be read. Open it in Office, save it again and upload the new file.' };
  const has = (name: string) => names.some((n) => n.toLowerCase() === name.toLowerCase());
  if (has('EncryptedPackage')) {
    const { document, app } = officeApplication(filename);
    return { type: null, reason: `This ${document} is password-protected. Remove the password in ${app} and upload it again.` };
  }
  if (has('WordDocument')) return { type: TYPES.doc };
  if (has('PowerPoint Document')) return { type: TYPES.ppt };
  // "Book" is the Excel 5/95 name of the workbook stream.
  if (has('Workbook') || has('Book')) return { type: TYPES.xls };
  return { type: null, reason: 'This is a Microsoft compound file but not a Word, Excel or PowerPoint document (an Outlook message, perhaps). Save the content as a PDF or an Office document and upload that.' };
}

async function readAt(filePath: string, position: number, length: number): Promise<Uint8Array> {
  const handle = await open(filePath, 'r');
  try {
    const buffer = Buffer.alloc(length);
    const { bytesRead } = await handle.read(buffer, 0, length, position);
    return buffer.subarray(0, bytesRead);
  } finally {
    await handle.close();
  }
}
