/**
 * Zip-bomb check for OOXML (DOCX, XLSX, PPTX) and ODF (ODT, ODS, ODP)
 * documents, before LibreOffice inflates them: an 8 MB .docx whose XML
 * inflates to 2.2 GB drove LibreOffice to 7.4 GB of memory.
 *
 * yauzl reads the zip's central directory only (nothing is inflated), and the
 * declared sizes are checked against three caps: the total uncompressed size,
 * the compression ratio (uncompressed / compressed, per large entry and in
 * total) and the number of entries. Real documents stay far below them (text
 * XML compresses 5-30x; images are stored as they are). A zip that lies about
 * its sizes passes this check, which is why LibreOffice also runs under a
 * memory limit (office-to-pdf.ts).
 */
import yauzl from 'yauzl';
import { ConversionError } from './conversion.errors.ts';

export interface ArchiveLimits {
  /** Sum of the entries' uncompressed sizes. */
  maxUncompressedBytes: number;
  /** Uncompressed / compressed, for the archive and for any entry over 1 MB uncompressed. */
  maxRatio: number;
  maxEntries: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxUncompressedBytes: 1024 * 1024 * 1024,
  maxRatio: 100,
  maxEntries: 10_000,
};

/** Entries smaller than this are not ratio-checked: a few KB of repeated XML compresses 1000x honestly. */
const RATIO_CHECK_FROM_BYTES = 1024 * 1024;

const mb = (bytes: number) => `${Math.round(bytes / (1024 * 1024)).toLocaleString('en-US')} MB`;

function refuse(detail: string): ConversionError {
  return new ConversionError(
    'archive_too_large',
    `This document cannot be converted safely: ${detail} That is what a "zip bomb" does; no real document needs it. ` +
      'Open it in Office, save it again (or split it) and upload the new file.',
  );
}

/** Throws a ConversionError when the archive's central directory breaks a cap; invalid zips are left to LibreOffice. */
export async function checkOfficeArchive(filePath: string, limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS): Promise<{ entries: number; uncompressedBytes: number; compressedBytes: number }> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.open(filePath, { lazyEntries: true, autoClose: false, validateEntrySizes: true }, (error, opened) => (error ? reject(error) : resolve(opened)));
  }).catch(() => null);
  if (!zip) return { entries: 0, uncompressedBytes: 0, compressedBytes: 0 };
  try {
    if (zip.entryCount > limits.maxEntries) {
      throw refuse(`it is an archive of ${zip.entryCount.toLocaleString('en-US')} files (the most allowed is ${limits.maxEntries.toLocaleString('en-US')}).`);
    }
    let uncompressed = 0;
    let compressed = 0;
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        uncompressed += entry.uncompressedSize;
        compressed += entry.compressedSize;
        const ratio = entry.uncompressedSize / Math.max(1, entry.compressedSize);
        if (entry.uncompressedSize >= RATIO_CHECK_FROM_BYTES && ratio > limits.maxRatio) {
          reject(refuse(`its part "${entry.fileName.slice(0, 80)}" would grow from ${mb(entry.compressedSize)} to ${mb(entry.uncompressedSize)} when unpacked (${Math.round(ratio)} times; the most allowed is ${limits.maxRatio}).`));
          return;
        }
        if (uncompressed > limits.maxUncompressedBytes) {
          reject(refuse(`it would unpack to more than ${mb(limits.maxUncompressedBytes)}.`));
          return;
        }
        zip.readEntry();
      });
      zip.on('end', () => resolve());
      zip.on('error', reject);
      zip.readEntry();
    }).catch((error: unknown) => {
      if (error instanceof ConversionError) throw error;
      // A damaged directory: LibreOffice says whether it can read the document.
    });
    if (compressed > 0 && uncompressed >= RATIO_CHECK_FROM_BYTES && uncompressed / compressed > limits.maxRatio) {
      throw refuse(`it would grow from ${mb(compressed)} to ${mb(uncompressed)} when unpacked (${Math.round(uncompressed / compressed)} times; the most allowed is ${limits.maxRatio}).`);
    }
    return { entries: zip.entryCount, uncompressedBytes: uncompressed, compressedBytes: compressed };
  } finally {
    zip.close();
  }
}
