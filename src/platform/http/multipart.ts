/**
 * Reads a multipart/form-data request (uploads, brand writes) the same way for
 * every route, so each refusal is decided once:
 *
 * - not multipart: 415 quoting the type that was sent;
 * - `Content-Length` over the route's limit: 413 at once, before a byte of the
 *   body is read (the error handler then closes the connection, so the body
 *   is not drained either); a body without a length is cut off by the parser
 *   the moment the file passes its limit;
 * - a file in another field, or a second file: 422 on the file field (the
 *   spec's "one file per request");
 * - field names, values and filenames with NUL or unpaired surrogates: 422
 *   naming the field (the same check as JSON input, input-guard.ts);
 * - a boundary RFC 2046 does not allow (empty, over 70 characters, characters
 *   outside its set): 400 before the parser sees it (busboy throws on a
 *   boundary over 256 characters instead of reporting it);
 * - a malformed body (no boundary, cut off, broken part headers): 400.
 */
import type { MultipartFile as FastifyMultipartFile } from '@fastify/multipart';
import type { FastifyRequest } from 'fastify';
import { ERRORS, isAppError, type AppError } from '../errors.ts';
import { assertCleanText } from './input-guard.ts';

/** Room for the text fields and part headers beside the file when checking Content-Length. */
export const MULTIPART_OVERHEAD_BYTES = 256 * 1024;

export interface MultipartFormOptions<T> {
  /** Names the file may be sent under; the first is the documented one, used in messages. */
  fileFields: readonly string[];
  /** The field name used in error details (default: the first of fileFields). */
  detailsField?: string;
  /** Largest file accepted, in bytes (also the parser's limit for the route). */
  maxFileBytes: number;
  /** Stores or buffers the file stream; called at most once. */
  receive(file: FastifyMultipartFile): Promise<T>;
  /** Undoes `receive` when the form is refused after the file was received. */
  discard?(value: T): Promise<void>;
  /** The error for a file over maxFileBytes (default 413 PayloadTooLargeException). */
  fileTooLarge?: () => AppError;
  /** What to send, for the 415 message. */
  expected: string;
}

export interface MultipartForm<T> {
  fields: Record<string, string>;
  file: { fieldname: string; filename: string; value: T } | null;
}

/** RFC 2046 section 5.1.1: 1-70 of these characters, the last not a space. */
const BOUNDARY = /^[0-9A-Za-z'()+_,\-./:=? ]{0,69}[0-9A-Za-z'()+_,\-./:=?]$/;

/** Every boundary parameter of a multipart Content-Type (quoted or not; a repeated one is checked too). */
export function multipartBoundaries(contentType: string): string[] {
  return [...contentType.matchAll(/;\s*boundary\s*=\s*(?:"([^"]*)"|([^;]*))/gi)].map((m) => m[1] ?? m[2]!.trim());
}

const MALFORMED = /multipart|boundary|malformed|unexpected end|terminated early/i;

function contentLength(request: FastifyRequest): number | null {
  const header = request.headers['content-length'];
  return header && /^\d+$/.test(header) ? Number(header) : null;
}

export async function readMultipartForm<T>(request: FastifyRequest, options: MultipartFormOptions<T>): Promise<MultipartForm<T>> {
  const fileField = options.fileFields[0]!;
  const detailsField = options.detailsField ?? fileField;
  if (!request.isMultipart()) {
    const sent = request.headers['content-type']?.split(';')[0]?.trim();
    throw ERRORS.unsupportedMediaType(`Content-Type ${sent ? JSON.stringify(sent.slice(0, 100)) : 'none'} is not accepted here: ${options.expected}`);
  }
  const length = contentLength(request);
  if (length !== null && length > options.maxFileBytes + MULTIPART_OVERHEAD_BYTES) {
    throw ERRORS.payloadTooLarge(`The request body (${length} bytes) is larger than this operation accepts (a file of at most ${options.maxFileBytes} bytes).`);
  }

  if (multipartBoundaries(request.headers['content-type'] ?? '').some((boundary) => !BOUNDARY.test(boundary))) {
    throw ERRORS.badRequest('The multipart boundary is invalid: RFC 2046 allows 1 to 70 letters, digits and the characters \'()+_,-./:=? and space (not last).');
  }

  const form: MultipartForm<T> = { fields: {}, file: null };
  try {
    for await (const part of request.parts()) {
      assertCleanText(part.fieldname || '_', part.fieldname);
      if (part.type === 'file') {
        if (!options.fileFields.includes(part.fieldname)) {
          part.file.resume();
          throw ERRORS.validation({ [part.fieldname]: [`Send the file in the ${fileField} field.`] });
        }
        if (form.file) {
          part.file.resume();
          throw ERRORS.validation({ [detailsField]: ['One file per request.'] });
        }
        const filename = part.filename ?? '';
        const problem = filename ? checkFilename(detailsField, filename) : null;
        if (problem) {
          part.file.resume();
          throw problem;
        }
        // At the limit the parser stops passing data on but keeps reading (and dropping) the rest of the
        // body before it ends the stream: fail the stream at once instead; the error handler then
        // answers and closes the connection, so nothing more is read.
        part.file.once('limit', () => part.file.destroy(Object.assign(new Error('file too large'), { code: 'FST_REQ_FILE_TOO_LARGE' })));
        form.file = { fieldname: part.fieldname, filename, value: await options.receive(part) };
      } else {
        const value = typeof part.value === 'string' ? part.value : String(part.value);
        assertCleanText(part.fieldname, value);
        form.fields[part.fieldname] = value;
      }
    }
  } catch (error) {
    if (form.file && options.discard) await options.discard(form.file.value);
    throw translateMultipartError(error, detailsField, options);
  }
  return form;
}

function checkFilename(field: string, filename: string): AppError | null {
  try {
    assertCleanText(`${field} filename`, filename);
    return null;
  } catch (error) {
    return error as AppError;
  }
}

function translateMultipartError(error: unknown, fileField: string, options: MultipartFormOptions<unknown>): unknown {
  if (isAppError(error)) return error;
  const code = (error as { code?: string }).code;
  if (code === 'FST_FILES_LIMIT') return ERRORS.validation({ [fileField]: ['One file per request.'] });
  if (code === 'FST_REQ_FILE_TOO_LARGE') return options.fileTooLarge?.() ?? ERRORS.payloadTooLarge(`The file is larger than ${options.maxFileBytes} bytes.`);
  if (code === 'FST_PARTS_LIMIT' || code === 'FST_FIELDS_LIMIT') return ERRORS.payloadTooLarge('The form has more parts than this operation accepts.');
  if (error instanceof Error && !code && MALFORMED.test(error.message)) return ERRORS.badRequest(`The multipart body is malformed: ${error.message}.`);
  return error;
}
