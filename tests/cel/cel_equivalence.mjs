// A second, independent check of the webhook's CEL rules: every
// x-kubernetes-validations rule of crds/ is compiled and evaluated with a
// real CEL engine (@bufbuild/cel) the way the API server evaluates it, over
// every case of tests/unit/data/admission, and compared with what the
// webhook's validation (admission_check, the same code the webhook runs) says
// about the same object. Any disagreement fails the run.
//
//   node cel_equivalence.mjs SOURCE_DIR ADMISSION_CHECK
//
// How the API server evaluates, and what is copied here:
//   - the object is first pruned of nulls and given its schema's defaults,
//     the old object too (UPDATE);
//   - a rule runs where its schema node has a value: once per list item, per
//     present field; a rule that names oldSelf runs only on UPDATE and only
//     where the old object has a value at the same path;
//   - a rule fails when it evaluates to false or to an error (an error is
//     reported with the error's text instead of the rule's message);
//   - no rule runs at all when the object has errors that block CEL
//     (required, type, enum, too long, too many): apiextensions'
//     hasBlockingErr. Such cases are compared only for being denied.
// Library functions the rules use that are not standard CEL are implemented
// below as Kubernetes defines them (regex find); the rest come from
// @bufbuild/cel and its strings extension, which Kubernetes also includes.
import { spawn } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { createInterface } from "node:readline";
import { parse as parseYaml } from "yaml";
import { CelScalar, celMethod, isCelError, parse, plan, celEnv } from "@bufbuild/cel";
import { strings } from "@bufbuild/cel/ext";

const [source, checker] = process.argv.slice(2);
if (!source || !checker) {
  console.error("usage: cel_equivalence.mjs SOURCE_DIR ADMISSION_CHECK");
  process.exit(2);
}

// ---- the Kubernetes CEL environment (what the rules need) --------------------

// Kubernetes' regex library: the first match of an RE2 pattern, or "".
const find = celMethod("find", CelScalar.STRING, [CelScalar.STRING], CelScalar.STRING, function (re) {
  const m = new RegExp(re, "u").exec(this);
  return m ? m[0] : "";
});
const env = celEnv({ funcs: [...strings, find] });

// Functions of the CEL environment of Kubernetes 1.25 (base, strings
// extension, lists, regex, URLs): a rule calling anything else would not
// compile on such a cluster.
const K8S_125_FUNCTIONS = new Set([
  // operators and macros
  "_==_", "_!=_", "_<_", "_<=_", "_>_", "_>=_", "_&&_", "_||_", "!_", "_?_:_", "_+_", "_-_",
  "_*_", "_/_", "_%_", "-_", "_[_]", "@in", "@not_strictly_false",
  // standard functions
  "size", "int", "uint", "double", "string", "bytes", "bool", "type", "duration", "timestamp",
  "dyn", "matches", "contains", "startsWith", "endsWith",
  // strings extension
  "charAt", "indexOf", "lastIndexOf", "lowerAscii", "replace", "split", "substring", "trim",
  "upperAscii", "join",
  // Kubernetes libraries
  "isSorted", "sum", "min", "max", "find", "findAll", "url", "isURL",
]);

function callNames(expr, out) {
  if (!expr || typeof expr !== "object") return;
  const k = expr.exprKind;
  if (k?.case === "callExpr") {
    out.add(k.value.function);
    callNames(k.value.target, out);
    for (const a of k.value.args) callNames(a, out);
  } else if (k?.case === "selectExpr") {
    callNames(k.value.operand, out);
  } else if (k?.case === "listExpr") {
    for (const e of k.value.elements) callNames(e, out);
  } else if (k?.case === "structExpr") {
    for (const e of k.value.entries) {
      callNames(e.keyKind?.value, out);
      callNames(e.value, out);
    }
  } else if (k?.case === "comprehensionExpr") {
    for (const f of ["iterRange", "accuInit", "loopCondition", "loopStep", "result"])
      callNames(k.value[f], out);
  }
}

// ---- the CRDs' rules ----------------------------------------------------------

const CRDS = {
  NodePool: "karpenter.sh_nodepools.yaml",
  NodeClaim: "karpenter.sh_nodeclaims.yaml",
  EC2NodeClass: "karpenter.k8s.aws_ec2nodeclasses.yaml",
  NodeOverlay: "karpenter.sh_nodeoverlays.yaml",
};

const failures = [];
const fail = (msg) => failures.push(msg);

function compileRules(kind) {
  const crd = parseYaml(readFileSync(join(source, "crds", CRDS[kind]), "utf8"));
  const schema = crd.spec.versions[0].schema.openAPIV3Schema;
  let count = 0;
  const visit = (node) => {
    if (!node || typeof node !== "object") return;
    for (const rule of node["x-kubernetes-validations"] ?? []) {
      const parsed = parse(rule.rule);
      const names = new Set();
      callNames(parsed.expr, names);
      for (const n of names)
        if (!K8S_125_FUNCTIONS.has(n)) fail(`${kind}: rule ${rule.rule}: ${n} is not in Kubernetes 1.25's CEL`);
      rule.run = plan(env, parsed);
      rule.transition = /\boldSelf\b/.test(rule.rule);
      count++;
    }
    for (const child of Object.values(node.properties ?? {})) visit(child);
    visit(node.items);
    if (typeof node.additionalProperties === "object") visit(node.additionalProperties);
  };
  visit(schema);
  return { schema, count };
}

// ---- objects as the API server sees them ------------------------------------

function pruneNulls(v) {
  if (Array.isArray(v)) return v.map(pruneNulls);
  if (v && typeof v === "object") {
    const out = {};
    for (const [k, x] of Object.entries(v)) if (x !== null) out[k] = pruneNulls(x);
    return out;
  }
  return v;
}

function applyDefaults(schema, v) {
  if (!schema) return;
  if (Array.isArray(v)) {
    for (const item of v) applyDefaults(schema.items, item);
  } else if (v && typeof v === "object") {
    for (const [k, prop] of Object.entries(schema.properties ?? {}))
      if (!(k in v) && prop.default !== undefined) v[k] = structuredClone(prop.default);
    for (const [k, prop] of Object.entries(schema.properties ?? {})) if (k in v) applyDefaults(prop, v[k]);
  }
}

function asServerSees(schema, obj) {
  if (obj === undefined) return undefined;
  const v = pruneNulls(obj);
  applyDefaults(schema, v);
  return v;
}

function toCel(v) {
  if (Array.isArray(v)) return v.map(toCel);
  if (v && typeof v === "object") return new Map(Object.entries(v).map(([k, x]) => [k, toCel(x)]));
  if (typeof v === "number" && Number.isInteger(v)) return BigInt(v);
  return v;
}

// Every rule instance: [{rule, path, failed, error}] for one object.
function evaluate(schema, obj, old) {
  const results = [];
  const walk = (node, value, oldValue, path) => {
    if (!node || value === undefined) return;
    for (const rule of node["x-kubernetes-validations"] ?? []) {
      if (rule.transition && oldValue === undefined) continue;
      const vars = { self: toCel(value) };
      if (rule.transition) vars.oldSelf = toCel(oldValue);
      const r = rule.run(vars);
      const error = isCelError(r) ? r.message : null;
      results.push({ rule, path, failed: error !== null || r !== true, error });
    }
    if (Array.isArray(value) && node.items)
      value.forEach((item, i) => walk(node.items, item, undefined, `${path}[${i}]`));
    else if (value && typeof value === "object" && !Array.isArray(value))
      for (const [k, prop] of Object.entries(node.properties ?? {}))
        walk(prop, value[k], oldValue && typeof oldValue === "object" ? oldValue[k] : undefined,
          path ? `${path}.${k}` : k);
  };
  walk(schema, obj, old, "");
  return results;
}

// ---- fixtures, expanded as tests/unit/test_validate_admission.c does ---------

function pointerTokens(p) {
  return p.split("/").slice(1).map((t) => t.replace(/~1/g, "/").replace(/~0/g, "~"));
}

function setAt(doc, pointer, value) {
  const tokens = pointerTokens(pointer);
  let node = doc;
  for (const t of tokens.slice(0, -1)) {
    if (node[t] === undefined) node[t] = {};
    node = node[t];
  }
  const last = tokens[tokens.length - 1];
  if (Array.isArray(node)) node[last === "-" ? node.length : Number(last)] = structuredClone(value);
  else node[last] = structuredClone(value);
}

function removeAt(doc, pointer) {
  const tokens = pointerTokens(pointer);
  let node = doc;
  for (const t of tokens.slice(0, -1)) node = node[t];
  const last = tokens[tokens.length - 1];
  if (Array.isArray(node)) node.splice(Number(last), 1);
  else delete node[last];
}

function edited(base, edit) {
  const doc = structuredClone(base);
  for (const [p, v] of Object.entries(edit?.set ?? {})) setAt(doc, p, v);
  for (const p of edit?.remove ?? []) removeAt(doc, p);
  if (edit?.patch) throw new Error("patch edits are not supported by this harness");
  return doc;
}

function loadCases() {
  const dir = join(source, "tests/unit/data/admission");
  const cases = [];
  for (const file of readdirSync(dir).filter((f) => f.endsWith(".yaml")).sort()) {
    const fixture = parseYaml(readFileSync(join(dir, file), "utf8"));
    const base = typeof fixture.base === "string"
      ? parseYaml(readFileSync(join(dir, "bases", `${fixture.base}.yaml`), "utf8"))
      : fixture.base;
    fixture.cases.forEach((c, i) => {
      const update = c.op === "update";
      cases.push({
        where: `${file}: case ${i} "${c.name}"`,
        kind: fixture.kind,
        op: update ? "update" : "create",
        object: edited(base, c),
        old: update ? edited(base, c.old) : undefined,
      });
    });
  }
  return cases;
}

// ---- the webhook's answers -----------------------------------------------------

async function webhookAnswers(cases) {
  const child = spawn(checker, [], { stdio: ["pipe", "pipe", "inherit"] });
  const lines = createInterface({ input: child.stdout });
  const answers = [];
  lines.on("line", (l) => answers.push(JSON.parse(l)));
  for (const c of cases)
    child.stdin.write(JSON.stringify({ kind: c.kind, op: c.op, object: c.object, old: c.old }) + "\n");
  child.stdin.end();
  await new Promise((resolve, reject) => {
    child.on("exit", (code) => (code === 0 ? resolve() : reject(new Error(`admission_check exited ${code}`))));
  });
  return answers;
}

// ---- the comparison ----------------------------------------------------------

const BLOCKING = new Set(["Required", "Type", "NotSupported", "TooLong", "TooMany"]);
const under = (path, prefix) =>
  path === prefix || prefix === "" || path.startsWith(`${prefix}.`) || path.startsWith(`${prefix}[`);

function compare(c, results, answer) {
  const errors = answer.errors ?? [];
  if (answer.failure) return fail(`${c.where}: the webhook could not validate: ${answer.failure}`);
  if (errors.some((e) => BLOCKING.has(e.type))) {
    // The API server runs no rule; it refuses the object for its schema errors.
    return "blocked";
  }
  for (const r of results.filter((x) => x.failed)) {
    const ok = errors.some((e) => under(e.path, r.path) && (r.error !== null || e.text.includes(r.rule.message)));
    if (!ok)
      fail(`${c.where}: the API server refuses ${r.path || "<root>"} (${r.error ? `${r.error} evaluating ` : ""}` +
        `rule ${r.rule.rule}: "${r.rule.message}") but the webhook does not; webhook errors: ` +
        `${JSON.stringify(errors.map((e) => e.text))}`);
  }
  for (const e of errors) {
    for (const r of results.filter((x) => !x.failed && e.text.includes(x.rule.message) && under(e.path, x.path))) {
      const failedElsewhere = results.some((x) => x.failed && x.rule === r.rule && under(e.path, x.path));
      if (!failedElsewhere)
        fail(`${c.where}: the webhook refuses ${e.path} with the message of rule ${r.rule.rule} ` +
          `("${r.rule.message}"), which the API server's evaluation passes: ${e.text}`);
    }
  }
  return "compared";
}

async function main() {
  const schemas = {};
  let rules = 0;
  for (const kind of Object.keys(CRDS)) {
    const { schema, count } = compileRules(kind);
    schemas[kind] = schema;
    rules += count;
  }
  const cases = loadCases();
  const answers = await webhookAnswers(cases);
  if (answers.length !== cases.length) fail(`${cases.length} cases sent, ${answers.length} answers`);
  const tally = { compared: 0, blocked: 0 };
  let evaluations = 0;
  cases.forEach((c, i) => {
    const schema = schemas[c.kind];
    const results = evaluate(schema, asServerSees(schema, c.object), asServerSees(schema, c.old));
    evaluations += results.length;
    const how = compare(c, results, answers[i] ?? {});
    if (how) tally[how]++;
  });
  for (const f of failures) console.log(`FAIL - ${f}`);
  console.log(`# ${rules} rules compiled; ${cases.length} cases: ${tally.compared} compared rule by rule ` +
    `(${evaluations} rule evaluations), ${tally.blocked} refused by the schema before any rule`);
  console.log(`${failures.length ? 0 : 1} passed, ${failures.length ? 1 : 0} failed`);
  process.exit(failures.length ? 1 : 0);
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
