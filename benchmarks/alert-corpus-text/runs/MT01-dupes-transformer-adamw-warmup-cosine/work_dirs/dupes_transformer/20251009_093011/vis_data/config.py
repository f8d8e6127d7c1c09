model = dict(type='TinyTransformer')
optim_wrapper = dict(optimizer=dict(type='AdamW', lr=0.001), clip_grad=dict(max_norm=1.0))
param_scheduler = [dict(type='LinearLR', start_factor=0.001, by_epoch=False, end=100), dict(type='CosineAnnealingLR', by_epoch=False, begin=100, end=900, eta_min=1e-05)]
train_cfg = dict(by_epoch=True, max_epochs=12, val_interval=1)
default_hooks = dict(logger=dict(type='LoggerHook', interval=10))
log_processor = dict(window_size=10, by_epoch=True)
vis_backends = [dict(type='LocalVisBackend')]
