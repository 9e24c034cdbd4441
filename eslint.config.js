// One flat config for the whole workspace; each package runs `eslint .` from its folder.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';
import globals from 'globals';

/** The Kafka clients for Node that the R-DIST-OBX-X1 guard below keeps out of handlers. */
export const kafkaClientModules = [
  'kafkajs',
  '@platformatic/kafka',
  '@confluentinc/kafka-javascript',
  'node-rdkafka',
];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '.stack/**', '.tools/**', '**/report/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-console': 'off',
    },
  },
  {
    // R-DIST-OBX-X1 / X2 (docs/rules.md): services reach Kafka only through the outbox.
    // Write handlers, after-commit hooks and every other module outside relay/ and
    // infrastructure/ may not import kafkajs, create a producer or send: the relay publishes
    // what a transaction wrote to the outbox, so nothing is sent that did not commit, and
    // nothing that committed is lost while Kafka is down. Type-only imports are fine.
    files: [
      'services/*/src/**/*.ts',
      'packages/service-kit/src/**/*.ts',
      'packages/contracts/src/**/*.ts',
    ],
    ignores: ['**/relay/**', '**/infrastructure/**'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          // Every Kafka client for Node, so that a fork that changes clients keeps the guard.
          paths: kafkaClientModules.map((name) => ({
            name,
            allowTypeImports: true,
            message: `R-DIST-OBX-X1: only relay/ and infrastructure/ modules use ${name}; write the event to the outbox with enqueue(trx, ...) instead.`,
          })),
          patterns: [
            {
              group: kafkaClientModules.map((name) => `${name}/*`),
              allowTypeImports: true,
              message:
                'R-DIST-OBX-X1: only relay/ and infrastructure/ modules use a Kafka client; write the event to the outbox with enqueue(trx, ...) instead.',
            },
          ],
        },
      ],
      'no-restricted-syntax': [
        'error',
        {
          // kafkajs and its confluent look-alike: kafka.producer()
          selector: "CallExpression[callee.property.name='producer']",
          message:
            'R-DIST-OBX-X1: Kafka producers are created only in relay/ and infrastructure/ modules; enqueue the event in the transaction instead.',
        },
        {
          // The library's own port (KafkaClient.createProducer), whichever adapter is behind it.
          selector: "CallExpression[callee.property.name='createProducer']",
          message:
            'R-DIST-OBX-X1: Kafka producers are created only in relay/ and infrastructure/ modules; enqueue the event in the transaction instead.',
        },
        {
          // @platformatic/kafka: new Producer(...); node-rdkafka: new Kafka.Producer(...)
          selector:
            'NewExpression[callee.name=/Producer$/], NewExpression[callee.property.name=/Producer$/]',
          message:
            'R-DIST-OBX-X1: Kafka producers are created only in relay/ and infrastructure/ modules; enqueue the event in the transaction instead.',
        },
        {
          selector:
            'CallExpression[callee.property.name=/^(send|sendBatch|produce)$/][callee.object.name=/producer/i]',
          message:
            'R-DIST-OBX-X1/X2: no Kafka send from a handler, a transaction or an after-commit hook; enqueue(trx, event) and let the relay publish.',
        },
        {
          selector:
            'CallExpression[callee.property.name=/^(send|sendBatch|produce)$/][callee.object.property.name=/producer/i]',
          message:
            'R-DIST-OBX-X1/X2: no Kafka send from a handler, a transaction or an after-commit hook; enqueue(trx, event) and let the relay publish.',
        },
      ],
    },
  },
);
