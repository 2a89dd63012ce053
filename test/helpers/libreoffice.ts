/**
 * Documents made by a real office suite: a flat OpenDocument text (.fodt) built here, converted by
 * LibreOffice (`soffice --headless --convert-to`, Debian's libreoffice-writer-nogui) into the PDF,
 * DOCX and HTML a user would send. Each conversion runs with a profile of its own in a temporary
 * folder, so parallel runs (and a desktop LibreOffice) do not share a lock.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { promisify } from 'node:util';

const run = promisify(execFile);

/** The soffice program on PATH (or at /usr/bin), or undefined when LibreOffice is not installed. */
export const SOFFICE: string | undefined = [...(process.env.PATH ?? '').split(delimiter), '/usr/bin']
  .map((dir) => join(dir, 'soffice'))
  .find((path) => existsSync(path));

/** Why a test needing LibreOffice is skipped, for the skip notice. */
export const NO_SOFFICE =
  'LibreOffice (soffice) is not installed: the documents made by a real office suite are not tested. Install it with `apt-get install -y --no-install-recommends libreoffice-writer-nogui fonts-liberation2 hyphen-en-us` (.ci/run does).';

/**
 * AI-written prose (this helper's author is an AI model, asked for a report section in its own
 * voice), for documents with a generated part.
 */
export const AI_PARAGRAPHS = [
  "In today's rapidly evolving digital landscape, organizations of every size are recognizing the critical importance of data-driven decision making. By leveraging advanced analytics and robust reporting frameworks, leaders can gain valuable insights into operational performance, customer behavior, and emerging market trends. This shift not only enhances strategic planning but also fosters a culture of continuous improvement across departments.",
  'Furthermore, the integration of cloud-based platforms has transformed the way teams collaborate and share information. Employees can now access critical resources from virtually anywhere, enabling greater flexibility and productivity. However, this increased connectivity also introduces new challenges related to data security, privacy, and compliance, which must be carefully addressed through comprehensive policies and regular training programs.',
  'It is important to note that successful digital transformation requires more than simply adopting new technologies. It demands a holistic approach that aligns people, processes, and tools with the overarching goals of the organization. Stakeholders at every level should be actively engaged in the journey, ensuring that changes are understood, embraced, and sustained over the long term.',
  'Another key consideration is the role of leadership in driving meaningful change. Effective leaders communicate a clear vision, set measurable objectives, and empower their teams to experiment and innovate. By fostering an environment of trust and psychological safety, they encourage employees to share ideas, take calculated risks, and learn from setbacks without fear of negative consequences.',
  'Moreover, organizations must remain agile in the face of uncertainty. Market conditions, regulatory requirements, and customer expectations can shift quickly, and companies that fail to adapt risk falling behind their competitors. Building resilience through flexible business models, diversified supply chains, and scalable infrastructure can help mitigate these risks and position the organization for sustainable growth.',
  'In addition, investing in employee development is essential for long-term success. Providing access to training, mentorship, and career advancement opportunities not only enhances individual skills but also strengthens overall organizational capability. When employees feel valued and supported, they are more likely to remain engaged, motivated, and committed to achieving shared goals.',
  'Sustainability has also emerged as a central priority for modern organizations. Customers, investors, and employees increasingly expect companies to demonstrate a genuine commitment to environmental and social responsibility. By integrating sustainable practices into core operations, organizations can reduce their environmental footprint, strengthen their brand reputation, and unlock new opportunities for innovation and value creation.',
  'In conclusion, navigating the complexities of the modern business environment requires a thoughtful and balanced approach. By embracing technology, prioritizing people, and remaining adaptable, organizations can overcome challenges and seize emerging opportunities. Ultimately, those that commit to continuous learning and improvement will be best positioned to thrive in an ever-changing world.',
];

export interface FodtSection {
  heading: string;
  paragraphs: string[];
}

export interface FodtOptions {
  sections: FodtSection[];
  /** Running header on every page. */
  header?: string;
  /** Running footer; `{n}` and `{total}` become the page number and page count fields. */
  footer?: string;
  /** Body font size, e.g. `12pt` (LibreOffice's default) or `10pt`. */
  fontSize?: string;
  /** Page margins, e.g. `2cm`. */
  margin?: string;
  /** Automatic hyphenation of the justified body text (words broken at line ends in the PDF). */
  hyphenate?: boolean;
  /** Space below each body paragraph, e.g. `0.25cm` (the default) or `0cm` (paragraphs told apart only by their last line). */
  paragraphSpacing?: string;
}

function escapeXml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** A flat OpenDocument text: A4, Liberation Serif, justified paragraphs, headings, header and footer. */
export function buildFodt(options: FodtOptions): string {
  const size = options.fontSize ?? '12pt';
  const margin = options.margin ?? '2cm';
  const hyphenate = options.hyphenate ? ' fo:hyphenate="true" fo:hyphenation-remain-char-count="2" fo:hyphenation-push-char-count="2"' : '';
  const field = (text: string) =>
    escapeXml(text).replace('{n}', '<text:page-number text:select-page="current"/>').replace('{total}', '<text:page-count/>');
  const body = options.sections
    .map(
      (section) =>
        `<text:h text:style-name="Heading" text:outline-level="1">${escapeXml(section.heading)}</text:h>\n` +
        section.paragraphs.map((p) => `<text:p text:style-name="Body">${escapeXml(p)}</text:p>`).join('\n'),
    )
    .join('\n');
  return `<?xml version="1.0" encoding="UTF-8"?>
<office:document xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:style="urn:oasis:names:tc:opendocument:xmlns:style:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:fo="urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0" xmlns:svg="urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0" office:version="1.3" office:mimetype="application/vnd.oasis.opendocument.text">
<office:font-face-decls><style:font-face style:name="Liberation Serif" svg:font-family="'Liberation Serif'"/></office:font-face-decls>
<office:styles>
<style:default-style style:family="paragraph"><style:text-properties style:font-name="Liberation Serif" fo:font-size="${size}" fo:language="en" fo:country="US"${hyphenate}/></style:default-style>
<style:style style:name="Body" style:family="paragraph"><style:paragraph-properties fo:margin-top="0cm" fo:margin-bottom="${options.paragraphSpacing ?? '0.25cm'}" fo:text-align="justify"/></style:style>
<style:style style:name="Heading" style:family="paragraph"><style:paragraph-properties fo:margin-top="0.4cm" fo:margin-bottom="0.2cm" fo:keep-with-next="always"/><style:text-properties fo:font-size="14pt" fo:font-weight="bold" fo:hyphenate="false"/></style:style>
</office:styles>
<office:automatic-styles>
<style:page-layout style:name="pm1"><style:page-layout-properties fo:page-width="21cm" fo:page-height="29.7cm" fo:margin-top="${margin}" fo:margin-bottom="${margin}" fo:margin-left="${margin}" fo:margin-right="${margin}"/></style:page-layout>
</office:automatic-styles>
<office:master-styles><style:master-page style:name="Standard" style:page-layout-name="pm1">
${options.header ? `<style:header><text:p>${field(options.header)}</text:p></style:header>` : ''}
${options.footer ? `<style:footer><text:p>${field(options.footer)}</text:p></style:footer>` : ''}
</style:master-page></office:master-styles>
<office:body><office:text>
${body}
</office:text></office:body></office:document>
`;
}

/** LibreOffice's export filter for each format a test asks for. */
const FILTERS = {
  pdf: 'pdf:writer_pdf_Export',
  docx: 'docx:MS Word 2007 XML',
  html: 'html:HTML (StarWriter)',
  xhtml: 'xhtml:XHTML Writer File:UTF8',
} as const;
export type OfficeFormat = keyof typeof FILTERS;

/** Converts a flat OpenDocument text with LibreOffice into each format asked for. */
export async function convertWithLibreOffice(fodt: string, formats: readonly OfficeFormat[]): Promise<Record<OfficeFormat, Buffer>> {
  if (!SOFFICE) throw new Error(NO_SOFFICE);
  const dir = await mkdtemp(join(tmpdir(), 'textdetect-soffice-'));
  try {
    const source = join(dir, 'document.fodt');
    await writeFile(source, fodt);
    const out = {} as Record<OfficeFormat, Buffer>;
    for (const format of formats) {
      await run(
        SOFFICE,
        [
          `-env:UserInstallation=${pathToFileURL(join(dir, 'profile')).href}`,
          '--headless',
          '--convert-to',
          FILTERS[format],
          '--outdir',
          dir,
          source,
        ],
        { timeout: 120_000, env: { ...process.env, HOME: dir } },
      );
      out[format] = await readFile(join(dir, `document.${format}`));
    }
    return out;
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
