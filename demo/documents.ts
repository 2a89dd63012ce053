/**
 * A PDF writer, byte by byte: text pages in 11 pt Helvetica with running headers and footers, or
 * image-only pages (a scan), or a file encrypted with a password. Hand-written so a test controls
 * exactly what is in the file (test/helpers/documents.ts adds DOCX, zips and bombs), and the demo
 * builds the document it checks without a PDF library. Text must be WinAnsi (Latin-1) characters.
 */

export interface PdfOptions {
  /** Paragraphs of body text; laid out in 11 pt Helvetica, wrapped at ~90 characters per line. */
  paragraphs?: string[];
  /** Exact pages to produce: pages beyond the text are blank; the text is spread over them. Default: as the text needs. */
  pages?: number;
  /** Running header on every page. */
  header?: string;
  /** Running footer on every page; `{n}` and `{total}` are replaced by the page number and count. */
  footer?: string;
  /** Lines per page (default 46). */
  linesPerPage?: number;
  /** Spread the text evenly over this many pages (overrides linesPerPage). */
  spreadOver?: number;
  /** Pages that carry only an image, no text (a scan). */
  imageOnly?: boolean;
  /** Adds a standard-security /Encrypt dictionary whose user password is not empty. */
  encrypted?: boolean;
}

function pdfString(text: string): string {
  return `(${text.replace(/\\/g, '\\\\').replace(/\(/g, '\\(').replace(/\)/g, '\\)')})`;
}

function wrap(paragraph: string, width = 90): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of paragraph.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}

export function buildPdf(options: PdfOptions): Buffer {
  // Body lines with an empty line between paragraphs (the gap tells the reader a new paragraph starts).
  const bodyLines: string[] = [];
  for (const paragraph of options.paragraphs ?? []) {
    if (bodyLines.length > 0) bodyLines.push('');
    bodyLines.push(...wrap(paragraph));
  }
  const perPage = options.spreadOver ? Math.max(1, Math.ceil(bodyLines.length / options.spreadOver)) : (options.linesPerPage ?? 46);
  const pageLines: string[][] = [];
  for (let i = 0; i < bodyLines.length; i += perPage) pageLines.push(bodyLines.slice(i, i + perPage));
  while (pageLines.length < (options.pages ?? 1)) pageLines.push([]);
  const total = pageLines.length;

  const objects: Buffer[] = [];
  const add = (body: string | Buffer): number => {
    objects.push(typeof body === 'string' ? Buffer.from(body, 'latin1') : body);
    return objects.length;
  };
  const stream = (dict: string, data: Buffer): Buffer =>
    Buffer.concat([Buffer.from(`<< ${dict} /Length ${data.length} >>\nstream\n`, 'latin1'), data, Buffer.from('\nendstream', 'latin1')]);

  add('<< /Type /Catalog /Pages 2 0 R >>');
  add('PAGES-PLACEHOLDER');
  const font = add('<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>');
  const image = options.imageOnly
    ? add(stream('/Type /XObject /Subtype /Image /Width 8 /Height 8 /ColorSpace /DeviceGray /BitsPerComponent 8', Buffer.alloc(64, 0x80)))
    : 0;
  const pageIds: number[] = [];
  pageLines.forEach((lines, index) => {
    let content = '';
    if (options.imageOnly) {
      content = 'q 468 0 0 648 72 72 cm /Im1 Do Q\n';
    } else {
      if (options.header) content += `BT /F1 9 Tf 72 760 Td ${pdfString(options.header)} Tj ET\n`;
      content += 'BT /F1 11 Tf 14 TL 72 730 Td\n';
      for (const line of lines) content += line ? `${pdfString(line)} Tj T*\n` : 'T*\n';
      content += 'ET\n';
      if (options.footer) {
        const footer = options.footer.replace('{n}', String(index + 1)).replace('{total}', String(total));
        content += `BT /F1 9 Tf 280 40 Td ${pdfString(footer)} Tj ET\n`;
      }
    }
    const contents = add(stream('', Buffer.from(content, 'latin1')));
    const resources = options.imageOnly ? `<< /XObject << /Im1 ${image} 0 R >> >>` : `<< /Font << /F1 ${font} 0 R >> >>`;
    pageIds.push(add(`<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources ${resources} /Contents ${contents} 0 R >>`));
  });
  objects[1] = Buffer.from(`<< /Type /Pages /Kids [${pageIds.map((id) => `${id} 0 R`).join(' ')}] /Count ${pageIds.length} >>`, 'latin1');
  let encrypt = '';
  if (options.encrypted) {
    // Random O and U entries: no password, the empty one included, opens it (as with a real protected file).
    const hex = (n: number, seed: number) =>
      Array.from({ length: n }, (_, i) => ((i * 37 + seed) % 256).toString(16).padStart(2, '0')).join('');
    const id = add(`<< /Filter /Standard /V 1 /R 2 /O <${hex(32, 11)}> /U <${hex(32, 91)}> /P -44 >>`);
    encrypt = ` /Encrypt ${id} 0 R /ID [<${hex(16, 5)}> <${hex(16, 5)}>]`;
  }

  return pdfFile(objects, { header: '%PDF-1.4\n%\xe2\xe3\xcf\xd3\n', trailer: encrypt });
}

/**
 * A PDF file of `objects` (object n is objects[n - 1], object 1 the catalogue): the header, each
 * object, the cross-reference table at their byte offsets and the trailer (`trailer` adds entries
 * to its dictionary, such as /Encrypt).
 */
export function pdfFile(objects: Buffer[], options: { header?: string; trailer?: string } = {}): Buffer {
  const parts: Buffer[] = [Buffer.from(options.header ?? '%PDF-1.4\n', 'latin1')];
  let offset = parts[0]!.length;
  const offsets: number[] = [];
  objects.forEach((body, i) => {
    offsets.push(offset);
    const chunk = Buffer.concat([Buffer.from(`${i + 1} 0 obj\n`, 'latin1'), body, Buffer.from('\nendobj\n', 'latin1')]);
    parts.push(chunk);
    offset += chunk.length;
  });
  let xref = `xref\n0 ${objects.length + 1}\n0000000000 65535 f \n`;
  for (const at of offsets) xref += `${String(at).padStart(10, '0')} 00000 n \n`;
  xref += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R${options.trailer ?? ''} >>\nstartxref\n${offset}\n%%EOF\n`;
  parts.push(Buffer.from(xref, 'latin1'));
  return Buffer.concat(parts);
}
