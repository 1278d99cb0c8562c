/**
 * Validates Kubernetes objects against the Kubernetes API's JSON schema (the kubernetes-models
 * package), as strictly as `kubectl apply --validate=strict`: the schema checks types, enums and
 * required fields but lets unknown fields through (a misspelt `readonly:` would be dropped by
 * the API server without a word), so each field is also probed: a known field rejects a value of
 * the wrong type, an unknown one does not.
 */
import { Job } from 'kubernetes-models/batch/v1/Job';
import { PersistentVolumeClaim } from 'kubernetes-models/v1/PersistentVolumeClaim';

type Obj = Record<string, unknown>;

const MODELS: Record<string, (o: Obj) => { validate(): void }> = {
  'batch/v1 Job': (o) => new Job(o as never),
  'v1 PersistentVolumeClaim': (o) => new PersistentVolumeClaim(o as never),
};

/** The ajv errors' instance paths of the schema validation of `obj`; [] when it is valid. */
function schemaErrors(obj: Obj): { path: string; message: string }[] {
  const model = MODELS[`${String(obj.apiVersion)} ${String(obj.kind)}`];
  if (!model) return [{ path: '', message: `no schema here for apiVersion ${String(obj.apiVersion)} kind ${String(obj.kind)} (known: ${Object.keys(MODELS).join(', ')})` }];
  try {
    model(obj).validate();
    return [];
  } catch (e) {
    const errors = (e as { errors?: { instancePath: string; message?: string }[] }).errors;
    if (!errors) throw e;
    return errors.map((x) => ({ path: x.instancePath, message: `${x.instancePath || '/'} ${x.message ?? ''}` }));
  }
}

// No Kubernetes field of these kinds takes an array of arrays of a fraction.
const PROBE = [[1.5]];

/** The JSON pointers of the fields of `obj` the schema does not know. */
function unknownFields(obj: Obj): string[] {
  const unknown: string[] = [];
  const walk = (node: unknown, path: (string | number)[]) => {
    if (Array.isArray(node)) return node.forEach((v, i) => walk(v, [...path, i]));
    if (node === null || typeof node !== 'object') return;
    for (const [k, v] of Object.entries(node as Obj)) {
      // The model sets these two itself; the schema lookup above checked them.
      if (path.length === 0 && (k === 'apiVersion' || k === 'kind')) continue;
      const at = [...path, k];
      const pointer = `/${at.map((p) => String(p).replace(/~/g, '~0').replace(/\//g, '~1')).join('/')}`;
      const probe = structuredClone(obj);
      let parent: Obj = probe;
      for (const p of path) parent = parent[p as string] as Obj;
      parent[k] = PROBE;
      if (!schemaErrors(probe).some((e) => e.path === pointer || e.path.startsWith(`${pointer}/`))) unknown.push(pointer);
      else walk(v, at);
    }
  };
  walk(obj, []);
  return unknown;
}

/** What is wrong with `obj` as a Kubernetes object, each naming the field; [] when it is valid. */
export function k8sProblems(obj: Obj): string[] {
  const errors = schemaErrors(obj);
  if (errors.length > 0) return errors.map((e) => e.message);
  return unknownFields(obj).map((p) => `${p}: unknown field`);
}
