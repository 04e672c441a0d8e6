/** Brand test helpers: a logo image and multipart POST/PUT /brand. */
import sharp from 'sharp';
import { sendMultipart, type ApiResponse, type TestService } from '../helpers.ts';

/** A wide PNG logo, drawn by sharp. */
export async function logoPng(width = 1600, height = 400, color = '#e4572e'): Promise<Buffer> {
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}"><rect width="100%" height="100%" fill="${color}"/>` +
    `<text x="50%" y="62%" font-size="${Math.round(height / 2)}" text-anchor="middle" fill="#fff" font-family="sans-serif">ACME</text></svg>`;
  return sharp(Buffer.from(svg)).png().toBuffer();
}

/** POST or PUT /v1/brand as multipart/form-data. */
export async function sendBrand(svc: TestService, key: string, method: 'POST' | 'PUT', fields: Record<string, string>, file?: { bytes: Buffer; name: string }): Promise<ApiResponse> {
  return sendMultipart(svc, key, method, '/v1/brand', fields, file && { field: 'file', ...file });
}
