/**
 * How pdf.js is opened in Node, and how its exceptions read to a person.
 *
 * - standardFontDataUrl: the 14 standard fonts (Helvetica, Times...) are not
 *   embedded in most PDFs; without these files their text is not drawn.
 * - cMapUrl: CJK text with predefined CMaps (issue6387.pdf) needs them.
 * - wasmUrl: JPEG 2000 (OpenJPEG), JBIG2 and ICC colour (qcms) decoders.
 * - iccUrl is left out: pdf.js loads that profile with a synchronous XHR, which
 *   Node lacks, so it falls back to its built-in CMYK conversion.
 * - isEvalSupported false: no code generation from document data (fonts'
 *   glyph programs are then interpreted, a little slower but never eval'd).
 * - disableFontFace: there is no FontFace in Node; glyphs are drawn as paths.
 * In Node these are plain file paths ending in "/", read with fs.
 */
import { createRequire } from 'node:module';
import path from 'node:path';
import type { DocumentInitParameters } from 'pdfjs-dist/types/src/display/api.js';
import { ConversionError } from './conversion.errors.ts';

const require = createRequire(import.meta.url);
const PDFJS_ROOT = path.dirname(require.resolve('pdfjs-dist/package.json'));

export function pdfjsDocumentOptions(data: Uint8Array, password: string | undefined, maxImagePixels: number): DocumentInitParameters {
  return {
    data,
    ...(password !== undefined ? { password } : {}),
    standardFontDataUrl: `${path.join(PDFJS_ROOT, 'standard_fonts')}${path.sep}`,
    cMapUrl: `${path.join(PDFJS_ROOT, 'cmaps')}${path.sep}`,
    cMapPacked: true,
    wasmUrl: `${path.join(PDFJS_ROOT, 'wasm')}${path.sep}`,
    isEvalSupported: false,
    disableFontFace: true,
    useSystemFonts: false,
    maxImageSize: maxImagePixels,
    // Warnings: the render worker collects them to tell what pdf.js left out of a page
    // (pdf-page-renderer.ts) and prints none; recoverable damage is not ours to log.
    verbosity: 1,
  };
}

interface PdfjsError {
  name?: string;
  code?: number;
  message?: string;
}

/** An exception from getDocument() → the error a person reads. */
export function openError(error: unknown, passwordGiven: boolean): ConversionError {
  const e = (error ?? {}) as PdfjsError;
  if (e.name === 'PasswordException') {
    // pdf.js PasswordResponses: 1 = NEED_PASSWORD, 2 = INCORRECT_PASSWORD.
    if (e.code === 2 && passwordGiven) {
      return new ConversionError('password_incorrect', 'The password for this PDF is incorrect.', { cause: error });
    }
    return new ConversionError('password_required', 'This PDF is protected with a password. Provide the password to convert it.', { cause: error });
  }
  if (e.name === 'InvalidPDFException') {
    return new ConversionError(
      'invalid_document',
      'This PDF is damaged beyond repair (its structure cannot be read), so it cannot be converted.',
      { cause: error },
    );
  }
  return new ConversionError('invalid_document', `This PDF could not be opened: ${e.message ?? 'unknown error'}.`, { cause: error });
}
