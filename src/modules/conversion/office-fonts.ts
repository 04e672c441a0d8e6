/**
 * Which fonts an office document asks for that this server does not have.
 *
 * LibreOffice lays a document out with the fonts installed: a font it lacks is
 * replaced by a similar one, and when the replacement is wider or narrower,
 * lines and pages break elsewhere (a 52-page Word document became 60 pages with
 * DejaVu standing in for Calibri). The metric-compatible free fonts (Carlito for
 * Calibri, Caladea for Cambria, Liberation for Arial, Times New Roman and
 * Courier New) keep the layout, so they count as present.
 *
 * The fonts asked for are read from the document's font declarations (DOCX
 * fontTable.xml and theme, XLSX styles.xml, PPTX theme, ODF font-face
 * declarations) without inflating anything large; fontconfig (`fc-match`)
 * says what this machine would use for each. No fontconfig: no check.
 */
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import yauzl from 'yauzl';
import type { ConversionWarning } from './conversion.types.ts';
import type { DocumentFormat } from './document-type.ts';

const run = promisify(execFile);

/** Parts that declare fonts, per format. */
const FONT_PARTS: Partial<Record<DocumentFormat, RegExp>> = {
  docx: /^word\/(fontTable\.xml|theme\/theme\d*\.xml)$/,
  xlsx: /^xl\/(styles\.xml|theme\/theme\d*\.xml)$/,
  pptx: /^ppt\/theme\/theme\d*\.xml$/,
  odt: /^(content|styles)\.xml$/,
  ods: /^(content|styles)\.xml$/,
  odp: /^(content|styles)\.xml$/,
};
/** A font-declaring part larger than this is not read (a real one is a few KB). */
const MAX_PART_BYTES = 4 * 1024 * 1024;
const MAX_FONTS = 40;

/** Font names → the metric-compatible families that stand in for them without changing the layout. */
const METRIC_COMPATIBLE: Record<string, string[]> = {
  'calibri': ['carlito'],
  'cambria': ['caladea'],
  'arial': ['liberation sans', 'arimo'],
  'helvetica': ['liberation sans', 'arimo'],
  'arial narrow': ['liberation sans narrow'],
  'times new roman': ['liberation serif', 'tinos'],
  'times': ['liberation serif', 'tinos'],
  'courier new': ['liberation mono', 'cousine'],
  'courier': ['liberation mono', 'cousine'],
};
/** Symbol fonts LibreOffice maps to OpenSymbol by itself, and placeholders that name no font. */
const IGNORED = /^(symbol|wingdings.*|webdings|marlett|mt extra|opensymbol|ms mincho|ms gothic|\+.*|)$/i;

const NAME_PATTERNS = [
  /<w:font\s+w:name="([^"]+)"/g, // DOCX fontTable
  /<a:latin\s+typeface="([^"]*)"/g, // themes (DOCX, XLSX, PPTX)
  /<name\s+val="([^"]+)"/g, // XLSX styles
  /svg:font-family="([^"]+)"/g, // ODF font-face
];

function decodeXml(value: string): string {
  return value.replace(/&apos;|&quot;|&amp;|&lt;|&gt;/g, (e) => ({ '&apos;': "'", '&quot;': '"', '&amp;': '&', '&lt;': '<', '&gt;': '>' })[e]!);
}

/** The font families an OOXML or ODF document declares. */
export async function declaredFonts(filePath: string, format: DocumentFormat): Promise<string[]> {
  const parts = FONT_PARTS[format];
  if (!parts) return [];
  const names = new Set<string>();
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => {
    yauzl.open(filePath, { lazyEntries: true, autoClose: false }, (error, opened) => (error ? reject(error) : resolve(opened)));
  }).catch(() => null);
  if (!zip) return [];
  try {
    await new Promise<void>((resolve, reject) => {
      zip.on('entry', (entry: yauzl.Entry) => {
        if (!parts.test(entry.fileName) || entry.uncompressedSize > MAX_PART_BYTES) {
          zip.readEntry();
          return;
        }
        zip.openReadStream(entry, (error, stream) => {
          if (error) return reject(error);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', reject);
          stream.on('end', () => {
            const xml = Buffer.concat(chunks).toString('utf8');
            for (const pattern of NAME_PATTERNS) {
              for (const match of xml.matchAll(pattern)) names.add(decodeXml(match[1]!).replace(/^['"]|['"]$/g, '').trim());
            }
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve());
      zip.on('error', reject);
      zip.readEntry();
    });
  } catch {
    // A damaged archive: LibreOffice reports on it; there is nothing to warn about here.
  } finally {
    zip.close();
  }
  return [...names].filter((name) => !IGNORED.test(name)).slice(0, MAX_FONTS);
}

/** The family fontconfig would use for `name`, or null without fontconfig. */
async function matchedFamily(name: string): Promise<string | null> {
  try {
    const { stdout } = await run('fc-match', ['-f', '%{family}', name], { timeout: 5000 });
    return stdout.trim();
  } catch {
    return null;
  }
}

/** Declared fonts that will be replaced by a font with other metrics on this machine. */
export async function substitutedFonts(declared: readonly string[]): Promise<string[]> {
  const missing: string[] = [];
  for (const name of declared) {
    const family = await matchedFamily(name);
    if (family === null) return [];
    const got = family.split(',').map((f) => f.trim().toLowerCase());
    const wanted = name.toLowerCase();
    const acceptable = [wanted, ...(METRIC_COMPATIBLE[wanted] ?? [])];
    if (!got.some((f) => acceptable.includes(f))) missing.push(name);
  }
  return missing;
}

/** The batch warning for an office document whose fonts this server lacks, or null. */
export async function fontWarning(filePath: string, format: DocumentFormat): Promise<ConversionWarning | null> {
  const missing = await substitutedFonts(await declaredFonts(filePath, format));
  if (missing.length === 0) return null;
  const list = missing.slice(0, 8).join(', ') + (missing.length > 8 ? ` and ${missing.length - 8} more` : '');
  return {
    code: 'fonts_substituted',
    message:
      `This document uses fonts this server does not have (${list}); similar fonts were used instead, so lines and pages may break differently from the original. ` +
      'For an exact copy, embed the fonts when saving (Word: File › Options › Save › Embed fonts in the file) or upload the document as a PDF.',
  };
}
