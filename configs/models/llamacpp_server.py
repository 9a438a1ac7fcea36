# A GGUF model served by llama.cpp's llama-server, started by the inference task on a free
# port and stopped when it ends (no base_url: the task finds it). Needs `llama-server` on
# PATH (built with GPU support to use the GPU). The server's output goes to
# logs/infer/<abbr>.server.log. env= adds variables to the server's environment.
_gguf = '{{$SCICODE_GGUF:models/qwen2.5-coder-7b-instruct-q4_k_m.gguf}}'

models = [
    dict(
        type='OpenAIChatModel',
        abbr='llamacpp-' + _gguf.split('/')[-1].rsplit('.', 1)[0],
        path=_gguf.split('/')[-1],      # llama-server answers whatever model name is asked for
        server=dict(command=['llama-server', '-m', _gguf, '--host', '127.0.0.1', '--port', '{port}',
                             '-c', '65536', '-np', '4',   # 4 requests at once, 16384 tokens each
                             '-ngl', '99'],               # every layer on the GPU
                    ready_timeout=600),
        key='EMPTY',                    # the server asks for no key; any non-empty value
        temperature=0.0,
        max_out_len=4096,
        max_concurrency=4,              # = -np
        timeout=1200,
        run_cfg=dict(num_gpus=1, num_procs=1),
    )
]
