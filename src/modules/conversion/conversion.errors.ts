/**
 * The one error type the conversion engine throws. `code` is stable (the books
 * job branches on it and may show it); `message` is written for the person who
 * uploaded the document, so it never carries a stack or a library's jargon.
 */

export type ConversionErrorCode =
  /** Zero-byte upload. */
  | 'empty_file'
  /** Bytes are not one of the accepted formats (see ACCEPTED_FORMATS). */
  | 'unsupported_format'
  /** Encrypted PDF and no password was given. */
  | 'password_required'
  /** Encrypted PDF and the given password is wrong. */
  | 'password_incorrect'
  /** The file claims a supported format but cannot be read (damaged, truncated). */
  | 'invalid_document'
  /** The document opened but has no page to show. */
  | 'no_pages'
  /** An image over the pixel limit, refused before decoding. */
  | 'too_large'
  /** An office document's zip would unpack to too much (zip-bomb check, office-archive.ts). */
  | 'archive_too_large'
  /** LibreOffice went over its memory limit on this document. */
  | 'office_memory'
  /** More pages than the server converts per book (MAX_PAGES_PER_BOOK). */
  | 'too_many_pages'
  /** LibreOffice is not installed on this machine. */
  | 'office_unavailable'
  /** LibreOffice ran but produced no PDF. */
  | 'office_failed'
  /** LibreOffice or a page render took longer than allowed. */
  | 'timeout'
  /** Rendering failed (every page failed, or the render workers kept crashing). */
  | 'render_failed'
  /** The caller's AbortSignal fired. */
  | 'aborted';

export class ConversionError extends Error {
  override name = 'ConversionError';
  readonly code: ConversionErrorCode;

  constructor(code: ConversionErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.code = code;
  }
}

export function isConversionError(value: unknown): value is ConversionError {
  return value instanceof ConversionError;
}

/** The error thrown when a job is cancelled, with the abort reason kept as cause. */
export function abortedError(signal?: AbortSignal): ConversionError {
  return new ConversionError('aborted', 'The conversion was cancelled.', { cause: signal?.reason });
}
