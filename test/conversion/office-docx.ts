/**
 * A Word document written by hand (WordprocessingML in a zip): Calibri body
 * text and Cambria headings, as Word's default template has them, optionally a
 * run in a font no server has, and the page count declared in its properties
 * (docProps/app.xml), as Word writes it.
 */
import { text } from 'node:stream/consumers';
import yauzl from 'yauzl';
import { makeZip } from './zip-maker.ts';

const W = 'http://schemas.openxmlformats.org/wordprocessingml/2006/main';
const LOREM = 'The quick brown fox jumps over the lazy dog while the flipbook engine lays out every line of this paragraph with the fonts the document asks for, so that pages break where the author saw them break. ';

export function makeWordDocument(options: { chapters: number; declaredPages: number; extraFont?: string }): Buffer {
  const body: string[] = [];
  for (let chapter = 1; chapter <= options.chapters; chapter++) {
    body.push(`<w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>Chapter ${chapter}</w:t></w:r></w:p>`);
    for (let p = 0; p < 6; p++) body.push(`<w:p><w:r><w:t xml:space="preserve">${LOREM.repeat(3)}</w:t></w:r></w:p>`);
    if (options.extraFont) body.push(`<w:p><w:r><w:rPr><w:rFonts w:ascii="${options.extraFont}" w:hAnsi="${options.extraFont}"/></w:rPr><w:t>Set in ${options.extraFont}.</w:t></w:r></w:p>`);
  }
  const fonts = ['Calibri', 'Cambria', 'Times New Roman', ...(options.extraFont ? [options.extraFont] : [])];
  const files = {
    '[Content_Types].xml': '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/><Override PartName="/word/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.styles+xml"/><Override PartName="/word/fontTable.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.fontTable+xml"/><Override PartName="/docProps/app.xml" ContentType="application/vnd.openxmlformats-officedocument.extended-properties+xml"/></Types>',
    '_rels/.rels': '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/extended-properties" Target="docProps/app.xml"/></Relationships>',
    'word/_rels/document.xml.rels': '<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/><Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/fontTable" Target="fontTable.xml"/></Relationships>',
    'word/document.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:document xmlns:w="${W}"><w:body>${body.join('')}<w:sectPr><w:pgSz w:w="11906" w:h="16838"/><w:pgMar w:top="1440" w:right="1440" w:bottom="1440" w:left="1440" w:header="708" w:footer="708" w:gutter="0"/></w:sectPr></w:body></w:document>`,
    'word/styles.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:styles xmlns:w="${W}"><w:docDefaults><w:rPrDefault><w:rPr><w:rFonts w:ascii="Calibri" w:hAnsi="Calibri" w:cs="Calibri"/><w:sz w:val="22"/></w:rPr></w:rPrDefault><w:pPrDefault><w:pPr><w:spacing w:after="160" w:line="259" w:lineRule="auto"/></w:pPr></w:pPrDefault></w:docDefaults><w:style w:type="paragraph" w:default="1" w:styleId="Normal"><w:name w:val="Normal"/></w:style><w:style w:type="paragraph" w:styleId="Heading1"><w:name w:val="heading 1"/><w:basedOn w:val="Normal"/><w:pPr><w:keepNext/><w:spacing w:before="480" w:after="240"/></w:pPr><w:rPr><w:rFonts w:ascii="Cambria" w:hAnsi="Cambria"/><w:b/><w:sz w:val="32"/></w:rPr></w:style></w:styles>`,
    'word/fontTable.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><w:fonts xmlns:w="${W}">${fonts.map((f) => `<w:font w:name="${f}"/>`).join('')}</w:fonts>`,
    'docProps/app.xml': `<?xml version="1.0" encoding="UTF-8" standalone="yes"?><Properties xmlns="http://schemas.openxmlformats.org/officeDocument/2006/extended-properties"><Application>Microsoft Office Word</Application><Pages>${options.declaredPages}</Pages></Properties>`,
  };
  return makeZip(Object.entries(files).map(([name, text]) => ({ name, data: Buffer.from(text) })));
}

/** The page count a Word document declares in docProps/app.xml. */
export async function declaredPages(docx: Buffer): Promise<number> {
  const zip = await new Promise<yauzl.ZipFile>((resolve, reject) => yauzl.fromBuffer(docx, { lazyEntries: true }, (e, z) => (e ? reject(e) : resolve(z))));
  const xml = await new Promise<string>((resolve, reject) => {
    zip.on('entry', (entry: yauzl.Entry) => {
      if (entry.fileName !== 'docProps/app.xml') return zip.readEntry();
      zip.openReadStream(entry, (error, stream) => (error ? reject(error) : text(stream).then(resolve, reject)));
    });
    zip.on('end', () => resolve(''));
    zip.readEntry();
  });
  zip.close();
  return Number(/<Pages>(\d+)<\/Pages>/.exec(xml)?.[1] ?? NaN);
}
