/**
 * What the layout checks of test/lambda/layout.unit.test.ts read in a TypeScript source, with
 * the compiler's own parser (so comments and strings never count): how long each function is,
 * and where the wall clock, timers or `Math.random` are used directly.
 */
import ts from 'typescript';

export interface FunctionSpan {
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/** Every function with a body (declarations, methods, accessors, arrows, expressions). */
export function functionSpans(fileName: string, text: string): FunctionSpan[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const spans: FunctionSpan[] = [];
  const lineOf = (position: number) => source.getLineAndCharacterOfPosition(position).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body !== undefined) {
      const line = lineOf(node.getStart(source));
      const named = ts.isVariableDeclaration(node.parent) || ts.isPropertyAssignment(node.parent);
      const name =
        node.name?.getText(source) ??
        (named ? node.parent.name.getText(source) : undefined) ??
        '(anonymous)';
      spans.push({ name, line, lines: lineOf(node.getEnd()) - line + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return spans;
}

/** Reads of time or randomness that must go through the Clock and Random ports instead. */
const PORTED = new Set([
  'Date.now',
  'performance.now',
  'Math.random',
  'AbortSignal.timeout',
  'setTimeout',
  'setInterval',
  'setImmediate',
]);

/** Every direct use of the wall clock, a timer or `Math.random`, as `line: expression`. */
export function wallClockUses(fileName: string, text: string): string[] {
  const source = ts.createSourceFile(fileName, text, ts.ScriptTarget.ES2022, true);
  const uses: string[] = [];
  const lineOf = (node: ts.Node) =>
    source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    const name =
      ts.isPropertyAccessExpression(node) || ts.isIdentifier(node) ? node.getText(source) : '';
    const parent = node.parent as ts.Node | undefined;
    const inAccess =
      parent !== undefined && ts.isPropertyAccessExpression(parent) && parent.name === node;
    if (PORTED.has(name) && !inAccess) uses.push(`${lineOf(node)}: ${name}`);
    if (ts.isNewExpression(node) && node.expression.getText(source) === 'Date') {
      if ((node.arguments ?? []).length === 0) uses.push(`${lineOf(node)}: new Date()`);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return uses;
}
