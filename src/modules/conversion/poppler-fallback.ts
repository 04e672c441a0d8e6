/**
 * Pixels of one page from poppler's pdftoppm, for the pages pdf.js cannot draw
 * whole: pdf.js decodes an image to full size before scaling it, so it leaves
 * out images over its decoding limit (a 100-megapixel fax-encoded scan would
 * need 400 MB of canvas). Poppler's Splash renderer scales images line by
 * line while decoding (30 MB and 1.5 s for a 12000 x 8400 CCITT page at
 * 2048 px), so such a page is drawn by poppler instead, text and links still
 * coming from pdf.js. pdftoppm is GPL and runs as a separate process
 * (Debian: poppler-utils); without it the page keeps its warning.
 *
 * pdftoppm takes a document's password only on its command line, where any
 * local user sees it (`ps`). An encrypted document is therefore first
 * decrypted by qpdf, which reads the password from a file (mode 0600, first
 * line), into the same private temporary directory; pdftoppm then reads the
 * copy. Without qpdf, or for a password qpdf cannot read from a file (one
 * with a line break), the page keeps its warning.
 */
import { execFile } from 'node:child_process';
import { readFile, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
/** Below the page timeout of the render pool, so a slow pdftoppm is stopped here first. */
const POPPLER_TIMEOUT_MS = 45_000;

export const POPPLER_PACKAGE = 'poppler-utils';

/** The page rasterised at exactly width x height (PNG bytes), or null when pdftoppm is missing or fails. */
export async function renderPageWithPoppler(options: {
  filePath: string;
  page: number;
  width: number;
  height: number;
  outDir: string;
  password?: string;
}): Promise<Buffer | null> {
  const root = path.join(options.outDir, `poppler-${process.pid}-${options.page}`);
  const decrypted = `${root}-decrypted.pdf`;
  try {
    let source = options.filePath;
    if (options.password !== undefined) {
      if (!(await decryptWithQpdf(options.filePath, options.password, decrypted))) return null;
      source = decrypted;
    }
    const args = [
      '-f', String(options.page), '-l', String(options.page),
      '-scale-to-x', String(options.width), '-scale-to-y', String(options.height),
      '-png', '-singlefile', source, root,
    ];
    await run('pdftoppm', args, { timeout: POPPLER_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: 1024 * 1024 });
    return await readFile(`${root}.png`);
  } catch {
    return null;
  } finally {
    await Promise.all([`${root}.png`, decrypted].map((file) => rm(file, { force: true })));
  }
}

/**
 * Writes a decrypted copy of `filePath` to `target` (the caller removes it),
 * the password passed to qpdf in a file of mode 0600 next to it, never on a
 * command line. False without qpdf, for a wrong password, or for a password
 * qpdf cannot read from a file (one with a line break).
 */
export async function decryptWithQpdf(filePath: string, password: string, target: string): Promise<boolean> {
  if (/[\r\n]/.test(password)) return false;
  const passwordFile = `${target}-password`;
  try {
    await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
    await run('qpdf', [`--password-file=${passwordFile}`, '--decrypt', '--', filePath, target], { timeout: POPPLER_TIMEOUT_MS, killSignal: 'SIGKILL' })
      .catch((error: { code?: number }) => {
        // Exit code 3: done, with warnings about a slightly damaged input.
        if (error.code !== 3) throw error;
      });
    return true;
  } catch {
    await rm(target, { force: true });
    return false;
  } finally {
    await rm(passwordFile, { force: true });
  }
}
