import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import ts from 'typescript';

/**
 * One change of a mutation, anchored on code rather than on line numbers: the declaration it
 * changes is found by name wherever it lives, so a refactor that moves or reformats the code
 * moves the mutation with it. When the anchor or the lines are gone, the mutation does not
 * apply, and says which.
 */
export interface AnchoredEdit {
  /**
   * The declaration, by its name and the names of the declarations around it: `claimBatch`, a
   * function; `startInboxWriter.storeBatch`, a function declared inside it;
   * `RequestAdmission.acquire`, a method; `FetchApplier.#applySet`, a private one. Functions,
   * methods, classes, functions assigned to a constant or a property, and module-level
   * constants count; the name must name exactly one.
   */
  readonly in: string;
  /**
   * `declaration` (the default): `find` is looked for inside the declaration. `module`: in the
   * whole file that holds it, for an import the change needs.
   */
  readonly scope?: 'declaration' | 'module';
  /** Consecutive lines, found once; indentation is not compared. */
  readonly find: readonly string[];
  /** The lines in their place, shifted by as much as the found lines' indentation differs. */
  readonly replace: readonly string[];
}

/** Where the mutations look for their anchors: the source of every package and service. */
const sourceRoots = ['packages', 'services'];

export class EditDoesNotApply extends Error {}

interface Declaration {
  readonly file: string;
  readonly start: number;
  readonly end: number;
}

const isFunction = (node: ts.Node | undefined): boolean =>
  node !== undefined && (ts.isArrowFunction(node) || ts.isFunctionExpression(node));

function nameOf(node: ts.Node): string | undefined {
  if (ts.isMethodDeclaration(node) && ts.isPrivateIdentifier(node.name)) return node.name.text;
  if (
    !(
      ts.isFunctionDeclaration(node) ||
      ts.isMethodDeclaration(node) ||
      ts.isClassDeclaration(node) ||
      ts.isVariableDeclaration(node) ||
      ts.isPropertyAssignment(node)
    ) ||
    node.name === undefined ||
    !ts.isIdentifier(node.name)
  )
    return undefined;
  if (ts.isVariableDeclaration(node)) {
    const moduleLevel = ts.isSourceFile(node.parent.parent.parent);
    return moduleLevel || isFunction(node.initializer) ? node.name.text : undefined;
  }
  if (ts.isPropertyAssignment(node))
    return isFunction(node.initializer) ? node.name.text : undefined;
  return node.name.text;
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const file = path.join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' ? [] : sourceFiles(file);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [file] : [];
  });
}

/** Every declaration named `qualifiedName` in the sources under `root`, as `textOf` has them. */
function findDeclarations(
  root: string,
  qualifiedName: string,
  textOf: (file: string) => string,
): Declaration[] {
  const found: Declaration[] = [];
  const last = qualifiedName.slice(qualifiedName.lastIndexOf('.') + 1);
  const files = sourceRoots.flatMap((top) =>
    readdirSync(path.join(root, top), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((entry) => {
        const src = path.join(root, top, entry.name, 'src');
        try {
          return sourceFiles(src);
        } catch {
          return [];
        }
      }),
  );
  for (const file of files) {
    const text = textOf(file);
    if (!text.includes(last)) continue;
    const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
    const visit = (node: ts.Node, outer: string): void => {
      const name = nameOf(node);
      const qualified = name === undefined ? outer : outer === '' ? name : `${outer}.${name}`;
      if (name !== undefined && qualified === qualifiedName)
        found.push({ file, start: node.getStart(source), end: node.getEnd() });
      ts.forEachChild(node, (child) => visit(child, qualified));
    };
    visit(source, '');
  }
  return found;
}

const indentOf = (line: string): number => line.length - line.trimStart().length;

/** `text` with the edit's lines replaced, once, inside [from, to); throws when not exactly once. */
function replaceLines(text: string, from: number, to: number, edit: AnchoredEdit): string {
  const lineStart = text.lastIndexOf('\n', from - 1) + 1;
  const lines = text.slice(lineStart, to).split('\n');
  const wanted = edit.find.map((line) => line.trim());
  const matches: number[] = [];
  for (let i = 0; i + wanted.length <= lines.length; i++) {
    if (wanted.every((line, j) => lines[i + j]?.trim() === line)) matches.push(i);
  }
  const [at] = matches;
  if (at === undefined || matches.length > 1 || wanted.length === 0)
    throw new EditDoesNotApply(
      `${edit.in}: the lines starting ${JSON.stringify(edit.find[0]?.trim())} occur ${matches.length} times in its ${edit.scope ?? 'declaration'}, not once`,
    );
  // The found lines sit this much deeper (or shallower) than the edit wrote them.
  const shift = indentOf(lines[at] ?? '') - indentOf(edit.find[0] ?? '');
  const replacement = edit.replace.map((line) =>
    line.trim() === '' ? '' : ' '.repeat(Math.max(0, indentOf(line) + shift)) + line.trimStart(),
  );
  lines.splice(at, wanted.length, ...replacement);
  return text.slice(0, lineStart) + lines.join('\n') + text.slice(to);
}

/**
 * Applies the edits to the sources under `root`, one after another, and returns the files it
 * changed with their new text; writes them only when `write` is set. Throws EditDoesNotApply,
 * naming the edit, when an anchor is missing or ambiguous or its lines are not found once.
 */
export function applyEdits(
  root: string,
  edits: readonly AnchoredEdit[],
  options: { write: boolean },
): Map<string, string> {
  const changed = new Map<string, string>();
  // A later edit of a file sees the earlier ones: its anchor is looked for in the changed text.
  const textOf = (file: string): string => changed.get(file) ?? readFileSync(file, 'utf8');
  for (const edit of edits) {
    const declarations = findDeclarations(root, edit.in, textOf);
    const [declaration] = declarations;
    if (declaration === undefined || declarations.length > 1) {
      const where = declarations.map((d) => path.relative(root, d.file)).join(', ');
      throw new EditDoesNotApply(
        `${edit.in}: ${declarations.length} declarations of that name${where ? ` (${where})` : ''}, not one`,
      );
    }
    const { file, start, end } = declaration;
    const text = textOf(file);
    const [from, to] = edit.scope === 'module' ? [0, text.length] : [start, end];
    changed.set(file, replaceLines(text, from, to, edit));
  }
  if (options.write) for (const [file, text] of changed) writeFileSync(file, text);
  return changed;
}
