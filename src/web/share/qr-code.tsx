/**
 * The QR code of a book's link: drawn as SVG from the `qr` library's
 * module matrix (so it is an image with a name, sharp at any size), and
 * downloadable as an SVG file (for print) or a PNG (for slides and mail).
 */
import encodeQR from 'qr';
import { useMemo, useState } from 'preact/hooks';
import { Button } from '../components/button.tsx';

/** Quiet zone of 4 modules, as the standard asks; "medium" correction survives a smudge or a small logo. */
const BORDER = 4;
const PNG_MODULE_PX = 12;

/** The dark modules as one path, joining each row's runs ("M3 4h5v1h-5z"). */
function modulesPath(matrix: boolean[][]): string {
  let d = '';
  matrix.forEach((row, y) => {
    for (let x = 0; x < row.length; x++) {
      if (!row[x]) continue;
      let run = 1;
      while (row[x + run]) run++;
      d += `M${x} ${y}h${run}v1h-${run}z`;
      x += run - 1;
    }
  });
  return d;
}

const escapeXml = (text: string) => text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');

/** A standalone SVG file of the code. */
export function qrSvgFile(url: string, title: string): string {
  const matrix = encodeQR(url, 'raw', { ecc: 'medium', border: BORDER });
  const size = matrix.length;
  return `<?xml version="1.0" encoding="UTF-8"?>\n<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 ${size} ${size}" width="${size * 10}" height="${size * 10}" shape-rendering="crispEdges"><title>${escapeXml(title)}</title><rect width="${size}" height="${size}" fill="#fff"/><path fill="#000" d="${modulesPath(matrix)}"/></svg>\n`;
}

function download(blob: Blob, filename: string): void {
  const href = URL.createObjectURL(blob);
  const link = document.createElement('a');
  link.href = href;
  link.download = filename;
  document.body.append(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(href), 10_000);
}

function pngOf(matrix: boolean[][]): Promise<Blob | null> {
  const canvas = document.createElement('canvas');
  canvas.width = canvas.height = matrix.length * PNG_MODULE_PX;
  const context = canvas.getContext('2d');
  if (!context) return Promise.resolve(null);
  context.fillStyle = '#fff';
  context.fillRect(0, 0, canvas.width, canvas.height);
  context.fillStyle = '#000';
  matrix.forEach((row, y) => row.forEach((dark, x) => dark && context.fillRect(x * PNG_MODULE_PX, y * PNG_MODULE_PX, PNG_MODULE_PX, PNG_MODULE_PX)));
  return new Promise((resolve) => canvas.toBlob(resolve, 'image/png'));
}

/** A file name from the book's name: "spring-catalogue-qr.svg". */
export function qrFileName(name: string, extension: 'svg' | 'png'): string {
  const base = name.normalize('NFKD').replace(/[\u0300-\u036f]/g, '').toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 60) || 'flipbook';
  return `${base}-qr.${extension}`;
}

export function QrCode({ url, bookName }: { url: string; bookName: string }) {
  const matrix = useMemo(() => encodeQR(url, 'raw', { ecc: 'medium', border: BORDER }), [url]);
  const [status, setStatus] = useState('');
  const name = `QR code for the link to ${bookName}`;
  const size = matrix.length;
  const savePng = async () => {
    const blob = await pngOf(matrix);
    if (!blob) return setStatus('This browser could not draw the PNG: download the SVG instead.');
    download(blob, qrFileName(bookName, 'png'));
    setStatus('The PNG was downloaded.');
  };
  return (
    <div class="qr">
      <svg class="qr-code" role="img" aria-label={name} viewBox={`0 0 ${size} ${size}`} shape-rendering="crispEdges" xmlns="http://www.w3.org/2000/svg">
        <rect width={size} height={size} fill="#fff" />
        <path fill="#000" d={modulesPath(matrix)} />
      </svg>
      <div class="stack">
        <p class="hint">Phones open the book when they scan it. For print, the SVG stays sharp at any size.</p>
        <div class="actions">
          <Button onClick={() => { download(new Blob([qrSvgFile(url, name)], { type: 'image/svg+xml' }), qrFileName(bookName, 'svg')); setStatus('The SVG was downloaded.'); }}>Download QR code (SVG)</Button>
          <Button onClick={savePng}>Download QR code (PNG)</Button>
        </div>
        <p class="hint" role="status">{status}</p>
      </div>
    </div>
  );
}
