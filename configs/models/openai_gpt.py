# A hosted OpenAI model. The key comes from $OPENAI_API_KEY (never written to any file).
from opencompass_scicode.models import OpenAIChatModel

models = [
    dict(
        type=OpenAIChatModel,
        abbr='gpt-4o',
        path='gpt-4o',
        key='ENV',                  # $OPENAI_API_KEY; or the name of another variable
        temperature=0.0,            # official
        max_out_len=4096,
        system_prompt='You are a helpful assistant.',   # official; None for no system message
        max_concurrency=16,         # requests in flight, for the whole run
        query_per_second=4,         # request starts per second, for the whole run
        retries=8,
        timeout=600,
    )
]
