# A model served by vLLM, started by the inference task on a free port and stopped when
# it ends (no base_url: the task finds it). Needs `pip install vllm` and one GPU.
# The server's output goes to logs/infer/<abbr>.server.log; the first start downloads the
# weights, hence the long ready_timeout. env= adds variables to the server's environment.
_model = '{{$SCICODE_MODEL:Qwen/Qwen2.5-Coder-7B-Instruct}}'

models = [
    dict(
        type='OpenAIChatModel',
        abbr='vllm-' + _model.split('/')[-1],
        path=_model,                    # vLLM serves the model under this name
        server=dict(command=['vllm', 'serve', _model, '--host', '127.0.0.1', '--port', '{port}'],
                    ready_timeout=1800),
        key='EMPTY',                    # the server asks for no key; any non-empty value
        temperature=0.0,
        max_out_len=4096,
        max_concurrency=32,
        timeout=1200,
        run_cfg=dict(num_gpus=1, num_procs=1),
    )
]
